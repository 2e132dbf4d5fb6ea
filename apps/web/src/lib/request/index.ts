export {
  del,
  get,
  patch,
  post,
  put,
  type RequestConfig,
  type RequestOptions,
  setRequestNavigator,
} from './request-client';
export { RequestError } from './request-error';
