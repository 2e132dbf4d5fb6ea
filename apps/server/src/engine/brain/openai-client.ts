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

/** Which kind of OpenAI-compatible service failed, and how its messages name it and its profile. */
export interface ProviderService {
  id: 'llm' | 'speech_recognition' | 'speech_synthesis';
  /** 模型服务, 语音识别服务: the subject of every message. */
  name: string;
  /** 模型配置, 语音识别配置: where the user fixes a wrong key. */
  profile: string;
}

export const LLM_SERVICE: ProviderService = { id: 'llm', name: '模型服务', profile: '模型配置' };

/**
 * A provider failure the console can show as is: Chinese, naming what to check, and never
 * carrying the API key (upstream messages are included only after the key is masked out).
 * `service` tells a call which of its providers failed (the brain, the recogniser).
 */
export class ProviderError extends AppError {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly upstreamStatus?: number,
    readonly service: ProviderService['id'] = 'llm',
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

/** 20 秒, or 300 毫秒 for the short waits tests use. */
const waitText = (ms: number) => (ms >= 1000 ? `${Math.round(ms / 1000)} 秒` : `${ms} 毫秒`);

/** A timeout this module's callers measured themselves (on their own clock), in the same words. */
export const providerTimeout = (timeoutMs: number, service: ProviderService = LLM_SERVICE) =>
  new ProviderError(
    'timeout',
    `${service.name}响应超时（超过 ${waitText(timeoutMs)}），请稍后再试`,
    undefined,
    service.id,
  );

/** Turns whatever the client threw into a ProviderError; an abort is passed through untouched. */
export function toProviderError(
  err: unknown,
  apiKey: string,
  timeoutMs = PROVIDER_TIMEOUT_MS,
  service: ProviderService = LLM_SERVICE,
): unknown {
  if (err instanceof ProviderError || err instanceof APIUserAbortError) return err;
  const { name } = service;
  const fail = (kind: ProviderErrorKind, message: string, status?: number) =>
    new ProviderError(kind, message, status, service.id);
  if (err instanceof APIConnectionTimeoutError) return providerTimeout(timeoutMs, service);
  if (err instanceof APIError && typeof err.status === 'number') {
    const status = err.status;
    if (status === 401 || status === 403) {
      return fail(
        'auth',
        `${name}拒绝了 API Key（HTTP ${status}），请检查${service.profile}中的 API Key`,
        status,
      );
    }
    if (status === 404) {
      return fail(
        'not_found',
        `${name}找不到该接口或模型（HTTP 404），请检查接口地址与模型名称${upstreamMessage(err, apiKey)}`,
        status,
      );
    }
    if (status === 429) {
      return fail('rate_limit', `${name}请求过于频繁或额度不足（HTTP 429），请稍后再试`, status);
    }
    if (status >= 500) {
      return fail('upstream', `${name}暂时不可用（HTTP ${status}），请稍后再试`, status);
    }
    return fail('bad_request', `${name}拒绝了请求（HTTP ${status}）${upstreamMessage(err, apiKey)}`, status);
  }
  if (err instanceof APIError) {
    return fail('network', `无法连接${name}，请检查接口地址是否正确、服务是否已启动`);
  }
  if (err instanceof SyntaxError) {
    return fail('bad_request', `${name}的应答格式不正确，请确认接口地址指向 OpenAI 兼容的接口`);
  }
  return err;
}
