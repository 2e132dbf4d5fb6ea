const STATUS_MESSAGES: Record<number, string> = {
  400: '请求参数错误',
  401: '未授权，请登录',
  403: '拒绝访问',
  404: '请求地址出错',
  408: '请求超时',
  500: '服务器内部错误',
  501: '服务未实现',
  502: '网关错误',
  503: '服务不可用',
  504: '网关超时',
  505: 'HTTP版本不受支持',
};

export const NETWORK_ERROR_MESSAGE = '网络连接失败，请检查网络设置';
export const GENERIC_ERROR_MESSAGE = '请求失败';

/** Every failed call rejects with this, whatever went wrong, so callers handle one shape. */
export class RequestError extends Error {
  override readonly name = 'RequestError';
  /** HTTP status, or the envelope's status when a 2xx answer says `success: false`; absent without a response. */
  readonly status: number | undefined;
  /** The machine-readable `code` of an error envelope, when the server sent one. */
  readonly code: string | undefined;
  /** The human sentence the server wrote, if any; `message` falls back to status or generic texts. */
  readonly serverMessage: string | undefined;

  constructor(message: string, init: { status?: number; code?: string; serverMessage?: string } = {}) {
    super(message);
    this.status = init.status;
    this.code = init.code;
    this.serverMessage = init.serverMessage;
  }
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** The server's own words, in the spec's order: `error`, then `message`, then `msg`. */
export function serverMessageOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { error, message, msg } = body as Record<string, unknown>;
  return nonEmptyString(error) ?? nonEmptyString(message) ?? nonEmptyString(msg);
}

export function statusMessageOf(status: number | undefined): string | undefined {
  return status === undefined ? undefined : STATUS_MESSAGES[status];
}
