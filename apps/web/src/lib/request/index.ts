export {
  API_PREFIX,
  apiClient,
  createRequestClient,
  del,
  get,
  OPENDOCK_PREFIX,
  opendockClient,
  patch,
  post,
  postForm,
  put,
  type RequestClient,
  type RequestConfig,
  type RequestOptions,
  setRequestNavigator,
} from './request-client';
export { RequestError } from './request-error';
