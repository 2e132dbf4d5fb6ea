import OpenAI, { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { AppError } from '../../lib/errors';

/** An OpenAI-compatible endpoint as a provider profile describes it, with the key decrypted. */
export interface ProviderEndpoint {
  baseUrl: string;
  apiKey: string;
}

export const PROVIDER_TIMEOUT_MS = 20_000;

/**
 * The one way this server builds an OpenAI client. Everything is passed explicitly: left unset,
 * the package would read OPENAI_API_KEY / OPENAI_ORG_ID / OPENAI_BASE_URL from the server's
 * environment and could send the operator's own key to a project's third-party endpoint.
 */
export function createOpenAIClient(
  endpoint: ProviderEndpoint,
  options: { fetch?: typeof fetch; timeoutMs?: number } = {},
): OpenAI {
  const hasKey = endpoint.apiKey !== '';
  return new OpenAI({
    baseURL: endpoint.baseUrl.replace(/\/+$/, ''),
    // Local servers (Ollama, vLLM) often need no key. The package insists on one at construction,
    // so it gets a placeholder, and the null default header (applied after auth) drops it again.
    apiKey: hasKey ? endpoint.apiKey : 'no-key',
    defaultHeaders: hasKey ? undefined : { Authorization: null },
    adminAPIKey: null,
    organization: null,
    project: null,
    timeout: options.timeoutMs ?? PROVIDER_TIMEOUT_MS,
    maxRetries: 1,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

export type ProviderErrorKind =
  | 'auth'
  | 'not_found'
  | 'rate_limit'
  | 'bad_request'
  | 'upstream'
  | 'timeout'
  | 'network';

/**
 * A provider failure the console can show as is: Chinese, naming what to check, and never
 * carrying the API key (upstream messages are included only after the key is masked out).
 */
export class ProviderError extends AppError {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly upstreamStatus?: number,
  ) {
    super(502, 'UPSTREAM_FAILED', message);
    this.name = 'ProviderError';
  }
}

/** Masks the key and anything that looks like one (providers echo partial keys in 401 messages). */
function redact(text: string, apiKey: string): string {
  let out = apiKey ? text.split(apiKey).join('***') : text;
  out = out.replace(/\b(sk|ak|key)[-_][A-Za-z0-9_*-]{6,}/gi, '***');
  return out.length > 160 ? `${out.slice(0, 160)}…` : out;
}

function upstreamMessage(err: APIError, apiKey: string): string {
  const body = err.error as { message?: unknown } | undefined;
  const raw = typeof body?.message === 'string' ? body.message : '';
  return raw ? `：${redact(raw, apiKey)}` : '';
}

/** Turns whatever the client threw into a ProviderError; an abort is passed through untouched. */
export function toProviderError(err: unknown, apiKey: string, timeoutMs = PROVIDER_TIMEOUT_MS): unknown {
  if (err instanceof ProviderError || err instanceof APIUserAbortError) return err;
  if (err instanceof APIConnectionTimeoutError) {
    return new ProviderError(
      'timeout',
      `模型服务响应超时（超过 ${Math.round(timeoutMs / 1000)} 秒），请稍后再试`,
    );
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const status = err.status;
    if (status === 401 || status === 403) {
      return new ProviderError(
        'auth',
        `模型服务拒绝了 API Key（HTTP ${status}），请检查模型配置中的 API Key`,
        status,
      );
    }
    if (status === 404) {
      return new ProviderError(
        'not_found',
        `模型服务找不到该接口或模型（HTTP 404），请检查接口地址与模型名称${upstreamMessage(err, apiKey)}`,
        status,
      );
    }
    if (status === 429) {
      return new ProviderError(
        'rate_limit',
        '模型服务请求过于频繁或额度不足（HTTP 429），请稍后再试',
        status,
      );
    }
    if (status >= 500) {
      return new ProviderError('upstream', `模型服务暂时不可用（HTTP ${status}），请稍后再试`, status);
    }
    return new ProviderError(
      'bad_request',
      `模型服务拒绝了请求（HTTP ${status}）${upstreamMessage(err, apiKey)}`,
      status,
    );
  }
  if (err instanceof APIError) {
    return new ProviderError('network', '无法连接模型服务，请检查接口地址是否正确、服务是否已启动');
  }
  if (err instanceof SyntaxError) {
    return new ProviderError('bad_request', '模型服务的应答格式不正确，请确认接口地址指向 OpenAI 兼容的接口');
  }
  return err;
}
