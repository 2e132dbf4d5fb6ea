export { postEventStream, postForBlob } from './fetch-client';
export {
  API_PREFIX,
  apiClient,
  createRequestClient,
  type DownloadedFile,
  del,
  fileNameOf,
  get,
  getBlob,
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
export { saveBlob } from './save-blob';
