import type { Envelope, ErrorEnvelope } from '@callpilot/contracts';
import axios, { type AxiosInstance, type AxiosRequestConfig, type AxiosResponse, isAxiosError } from 'axios';
import { toast } from 'sonner';
import { loginHref } from '@/config/paths';
import { clearToken, getToken } from '@/lib/auth-token';
import { startLoading, stopLoading } from './loading-counter';
import {
  GENERIC_ERROR_MESSAGE,
  NETWORK_ERROR_MESSAGE,
  RequestError,
  serverMessageOf,
  statusMessageOf,
} from './request-error';

/** What a call site may decide; everything else about errors is decided here. */
export type RequestOptions = {
  /** Drive the thin top progress bar while the call is in flight (default true). */
  showLoading?: boolean;
  /** Toast the failure (default true). Pass false when the caller shows the error itself. */
  showError?: boolean;
  /** Send the stored bearer token (default true; login, register and sms-captcha never do). */
  withToken?: boolean;
  /** Extra attempts for an idempotent call that failed on the network or with a 5xx (default 2). */
  retry?: number;
  /** Wait before each extra attempt, in ms (default 1000). */
  retryDelay?: number;
  /** Text shown when the server gives no message, instead of the status or generic text. */
  fallbackMessage?: string;
  /**
   * Send the visitor to /login on a 401 (default true). Pass false for a probe that only asks
   * whether a stored token still works, on a public page that must not throw its visitor out.
   */
  redirectOnUnauthorized?: boolean;
};

export type RequestConfig = Omit<AxiosRequestConfig, 'url' | 'method' | 'data'> & RequestOptions;

type FullRequestConfig = AxiosRequestConfig & RequestOptions;

export const UNAUTHORIZED_MESSAGE = '未登录或登录已过期';
export const LOGIN_REDIRECT_DELAY_MS = 1000;
export const DEFAULT_RETRY = 2;
export const DEFAULT_RETRY_DELAY_MS = 1000;

/** The spec's "url prefix appended to the base URL"; this server mounts its API at the root. */
export const API_PREFIX = '';
/** The second client's prefix. */
export const OPENDOCK_PREFIX = '/opendock';

/** Where the API lives; the fetch-based helpers (event streams, binary bodies) prefix it too. */
export const API_BASE = import.meta.env.VITE_API_BASE ?? '';

// Credentials are not yet known on these calls, and a stale token must not turn them into a 401.
const TOKENLESS_PATHS = new Set(['/auth/login', '/auth/register', '/auth/sms-captcha']);
const AUTH_PATH_PREFIX = '/auth/';

// Its failures mean "the session could not be renewed", which the 401 flow already handles.
const NO_TOAST_PATHS = new Set(['/auth/refresh-token']);

// Repeating these cannot change server state twice, so a retry after a blip is safe.
const IDEMPOTENT_METHODS = new Set(['GET', 'PUT', 'DELETE', 'HEAD', 'OPTIONS']);

// The spec swallows this one: the console shows its own "contact sales" dialog for a disabled
// project, so a toast per data call would only repeat it.
const SILENT_SERVER_MESSAGES = new Set(['Project is disabled']);

function pathOf(url: string | undefined): string {
  return new URL(url ?? '', 'http://relative.invalid').pathname;
}

let navigate = (to: string): void => {
  window.location.assign(to);
};

/** Lets the app route the 401 redirect through its router instead of reloading the page. */
export function setRequestNavigator(navigator: (to: string) => void): void {
  navigate = navigator;
}

// Keyed by text so a burst of identical failures (the network dropping) stacks into one toast.
function showErrorToast(message: string): void {
  toast.error(message, { id: message });
}

// Parallel calls fail together when a session expires; one toast and one redirect are enough.
let loginRedirectPending = false;

function redirectToLogin(): void {
  if (loginRedirectPending) return;
  loginRedirectPending = true;
  showErrorToast(UNAUTHORIZED_MESSAGE);
  setTimeout(() => {
    loginRedirectPending = false;
    clearToken();
    const { pathname, search } = window.location;
    navigate(loginHref(`${pathname}${search}`));
  }, LOGIN_REDIRECT_DELAY_MS);
}

function toRequestError(config: FullRequestConfig, status: number | undefined, body: unknown): RequestError {
  const serverMessage = serverMessageOf(body);
  const withoutServerText =
    status === undefined ? NETWORK_ERROR_MESSAGE : (statusMessageOf(status) ?? GENERIC_ERROR_MESSAGE);
  const code = (body as Partial<ErrorEnvelope> | undefined)?.code;
  return new RequestError(serverMessage ?? config.fallbackMessage ?? withoutServerText, {
    ...(status === undefined ? {} : { status }),
    ...(typeof code === 'string' ? { code } : {}),
    ...(serverMessage === undefined ? {} : { serverMessage }),
  });
}

function shouldToast(config: FullRequestConfig, error: RequestError): boolean {
  return (
    config.showError !== false &&
    !NO_TOAST_PATHS.has(pathOf(config.url)) &&
    !SILENT_SERVER_MESSAGES.has(error.serverMessage ?? '')
  );
}

function fail(config: FullRequestConfig, error: RequestError): never {
  const isAuthCall = pathOf(config.url).startsWith(AUTH_PATH_PREFIX);
  if (error.status === 401 && !isAuthCall) {
    if (config.redirectOnUnauthorized !== false) redirectToLogin();
  } else if (shouldToast(config, error)) {
    showErrorToast(error.message);
  }
  throw error;
}

/**
 * The same failure policy for calls made outside axios (fetch streams, binary answers): builds the
 * RequestError from status and body, runs the 401 flow or the toast, then throws it.
 */
export function failRequest(
  url: string,
  status: number | undefined,
  body: unknown,
  options: RequestOptions = {},
): never {
  const config: FullRequestConfig = { ...options, url };
  return fail(config, toRequestError(config, status, body));
}

function isRetryable(config: FullRequestConfig, error: unknown): boolean {
  if (!IDEMPOTENT_METHODS.has((config.method ?? 'GET').toUpperCase())) return false;
  if (!isAxiosError(error) || axios.isCancel(error)) return false;
  const status = error.response?.status;
  return status === undefined || status >= 500;
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export type RequestClient = {
  /** The underlying axios instance (tests replace its adapter). */
  http: AxiosInstance;
  get<T>(url: string, config?: RequestConfig): Promise<T>;
  del<T>(url: string, config?: RequestConfig): Promise<T>;
  post<T>(url: string, data?: unknown, config?: RequestConfig): Promise<T>;
  put<T>(url: string, data?: unknown, config?: RequestConfig): Promise<T>;
  patch<T>(url: string, data?: unknown, config?: RequestConfig): Promise<T>;
  /** POST as multipart/form-data; a plain object is turned into FormData first. */
  postForm<T>(url: string, data: FormData | Record<string, unknown>, config?: RequestConfig): Promise<T>;
  /** GET a file (not an envelope) with the token; failures follow the same policy as JSON calls. */
  getBlob(url: string, config?: RequestConfig): Promise<DownloadedFile>;
};

export type DownloadedFile = {
  blob: Blob;
  /** From Content-Disposition (RFC 5987 `filename*` first); undefined when the server names none. */
  fileName: string | undefined;
};

/** The file name a Content-Disposition header gives, decoding the UTF-8 form Chinese names need. */
export function fileNameOf(disposition: unknown): string | undefined {
  if (typeof disposition !== 'string') return undefined;
  const encoded = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(disposition)?.[1];
  if (encoded) {
    try {
      return decodeURIComponent(encoded.trim());
    } catch {
      // A malformed escape falls through to the plain name.
    }
  }
  const plain = /filename\s*=\s*"?([^";]+)"?/.exec(disposition)?.[1];
  return plain?.trim() || undefined;
}

// An error answer to a blob request arrives as a Blob too; its JSON envelope holds the message.
async function envelopeOfBlob(data: unknown): Promise<unknown> {
  const text = data instanceof Blob ? await data.text() : data;
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function appendField(form: FormData, key: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) appendField(form, key, item);
  } else if (value instanceof Blob) {
    form.append(key, value);
  } else if (typeof value === 'object') {
    form.append(key, JSON.stringify(value));
  } else {
    form.append(key, String(value));
  }
}

export function toFormData(data: FormData | Record<string, unknown>): FormData {
  if (data instanceof FormData) return data;
  const form = new FormData();
  for (const [key, value] of Object.entries(data)) appendField(form, key, value);
  return form;
}

/** One policy (token, errors, 401 flow, loading, retry) for every server prefix. */
export function createRequestClient(prefix: string): RequestClient {
  const http = axios.create({
    baseURL: `${API_BASE}${prefix}`,
    timeout: 60_000,
    headers: { 'Content-Type': 'application/json' },
  });

  http.interceptors.request.use((config) => {
    const token = getToken();
    const wantsToken = (config as FullRequestConfig).withToken !== false;
    if (token && wantsToken && !TOKENLESS_PATHS.has(pathOf(config.url))) {
      config.headers.set('Authorization', `Bearer ${token}`);
    }
    return config;
  });

  async function send(config: FullRequestConfig): Promise<AxiosResponse<unknown>> {
    const retries = Math.max(0, config.retry ?? DEFAULT_RETRY);
    const delay = config.retryDelay ?? DEFAULT_RETRY_DELAY_MS;
    for (let attempt = 0; ; attempt++) {
      try {
        return await http.request<unknown>(config);
      } catch (error) {
        if (attempt >= retries || !isRetryable(config, error)) throw error;
        await wait(delay);
      }
    }
  }

  async function request<T>(config: FullRequestConfig): Promise<T> {
    const showLoading = config.showLoading !== false;
    if (showLoading) startLoading();
    let response: AxiosResponse<unknown>;
    try {
      response = await send(config);
    } catch (error) {
      // An aborted call (a query whose component unmounted) is nobody's failure to report.
      if (axios.isCancel(error)) throw error;
      const failed = isAxiosError(error) ? error.response : undefined;
      return fail(config, toRequestError(config, failed?.status, failed?.data));
    } finally {
      if (showLoading) stopLoading();
    }
    const body = response.data as Partial<Envelope<T>> | Partial<ErrorEnvelope> | undefined;
    if (body?.success === false) {
      // A 2xx carrying `success: false` reports its real status in the envelope.
      const status = typeof body.status === 'number' && body.status >= 400 ? body.status : response.status;
      return fail(config, toRequestError(config, status, body));
    }
    return (body as Envelope<T> | undefined)?.data as T;
  }

  async function requestBlob(config: FullRequestConfig): Promise<DownloadedFile> {
    const showLoading = config.showLoading !== false;
    if (showLoading) startLoading();
    let response: AxiosResponse<unknown>;
    try {
      response = await send({ ...config, responseType: 'blob' });
    } catch (error) {
      if (axios.isCancel(error)) throw error;
      const failed = isAxiosError(error) ? error.response : undefined;
      return fail(config, toRequestError(config, failed?.status, await envelopeOfBlob(failed?.data)));
    } finally {
      if (showLoading) stopLoading();
    }
    const contentType = String(response.headers['content-type'] ?? '');
    // Some failures are 2xx JSON envelopes with `success: false`; they are not the file.
    if (contentType.includes('application/json')) {
      const body = (await envelopeOfBlob(response.data)) as Partial<ErrorEnvelope> | undefined;
      if (body?.success === false) {
        const status = typeof body.status === 'number' && body.status >= 400 ? body.status : response.status;
        return fail(config, toRequestError(config, status, body));
      }
    }
    const blob =
      response.data instanceof Blob
        ? response.data
        : new Blob([String(response.data ?? '')], { type: contentType });
    return { blob, fileName: fileNameOf(response.headers['content-disposition']) };
  }

  return {
    http,
    getBlob: (url, config) => requestBlob({ ...config, method: 'GET', url }),
    get: (url, config) => request({ ...config, method: 'GET', url }),
    del: (url, config) => request({ ...config, method: 'DELETE', url }),
    post: (url, data, config) => request({ ...config, method: 'POST', url, data }),
    put: (url, data, config) => request({ ...config, method: 'PUT', url, data }),
    patch: (url, data, config) => request({ ...config, method: 'PATCH', url, data }),
    postForm: (url, data, config) =>
      request({
        ...config,
        method: 'POST',
        url,
        data: toFormData(data),
        // Not JSON: axios would serialise the FormData. The browser fills in the boundary.
        headers: { ...config?.headers, 'Content-Type': 'multipart/form-data' },
      }),
  };
}

/** The console's API client. */
export const apiClient = createRequestClient(API_PREFIX);
/** The second client of the spec, same policy, under `/opendock`. */
export const opendockClient = createRequestClient(OPENDOCK_PREFIX);

export const http = apiClient.http;
export const { get, del, post, put, patch, postForm, getBlob } = apiClient;
