import type { Envelope, ErrorEnvelope } from '@callpilot/contracts';
import axios, { type AxiosRequestConfig, type AxiosResponse, isAxiosError } from 'axios';
import { toast } from 'sonner';
import { loginHref } from '@/config/paths';
import { clearToken, getToken } from '@/lib/auth-token';
import {
  GENERIC_ERROR_MESSAGE,
  NETWORK_ERROR_MESSAGE,
  RequestError,
  serverMessageOf,
  statusMessageOf,
} from './request-error';

/** What a call site may decide; everything else about errors is decided here. */
export type RequestOptions = {
  /** Toast the failure (default true). Pass false when the caller shows the error itself. */
  showError?: boolean;
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

// Credentials are not yet known on these calls, and a stale token must not turn them into a 401.
const TOKENLESS_PATHS = new Set(['/auth/login', '/auth/register', '/auth/sms-captcha']);
const AUTH_PATH_PREFIX = '/auth/';

// The spec swallows this one: the console shows its own "contact sales" dialog for a disabled
// project, so a toast per data call would only repeat it.
const SILENT_SERVER_MESSAGES = new Set(['Project is disabled']);

export const http = axios.create({
  baseURL: import.meta.env.VITE_API_BASE ?? '',
  timeout: 60_000,
  headers: { 'Content-Type': 'application/json' },
});

function pathOf(url: string | undefined): string {
  return new URL(url ?? '', 'http://relative.invalid').pathname;
}

http.interceptors.request.use((config) => {
  const token = getToken();
  if (token && !TOKENLESS_PATHS.has(pathOf(config.url))) {
    config.headers.set('Authorization', `Bearer ${token}`);
  }
  return config;
});

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

function fail(config: FullRequestConfig, error: RequestError): never {
  const isAuthCall = pathOf(config.url).startsWith(AUTH_PATH_PREFIX);
  if (error.status === 401 && !isAuthCall) {
    if (config.redirectOnUnauthorized !== false) redirectToLogin();
  } else if (config.showError !== false && !SILENT_SERVER_MESSAGES.has(error.serverMessage ?? '')) {
    showErrorToast(error.message);
  }
  throw error;
}

async function request<T>(config: FullRequestConfig): Promise<T> {
  let response: AxiosResponse<unknown>;
  try {
    response = await http.request<unknown>(config);
  } catch (error) {
    // An aborted call (a query whose component unmounted) is nobody's failure to report.
    if (axios.isCancel(error)) throw error;
    const failed = isAxiosError(error) ? error.response : undefined;
    return fail(config, toRequestError(config, failed?.status, failed?.data));
  }
  const body = response.data as Partial<Envelope<T>> | Partial<ErrorEnvelope> | undefined;
  if (body?.success === false) {
    // A 2xx carrying `success: false` reports its real status in the envelope.
    const status = typeof body.status === 'number' && body.status >= 400 ? body.status : response.status;
    return fail(config, toRequestError(config, status, body));
  }
  return (body as Envelope<T> | undefined)?.data as T;
}

export function get<T>(url: string, config?: RequestConfig): Promise<T> {
  return request<T>({ ...config, method: 'GET', url });
}

export function del<T>(url: string, config?: RequestConfig): Promise<T> {
  return request<T>({ ...config, method: 'DELETE', url });
}

export function post<T>(url: string, data?: unknown, config?: RequestConfig): Promise<T> {
  return request<T>({ ...config, method: 'POST', url, data });
}

export function put<T>(url: string, data?: unknown, config?: RequestConfig): Promise<T> {
  return request<T>({ ...config, method: 'PUT', url, data });
}

export function patch<T>(url: string, data?: unknown, config?: RequestConfig): Promise<T> {
  return request<T>({ ...config, method: 'PATCH', url, data });
}
