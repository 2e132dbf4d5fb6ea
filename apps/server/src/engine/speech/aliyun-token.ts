import { createHash, createHmac, randomUUID } from 'node:crypto';
import { ProviderError, type ProviderErrorKind, providerTimeout } from '../brain/openai-client';
import { type Clock, clockDeadline, systemClock } from '../clock';
import { RECOGNITION_SERVICE } from './openai-transcriber';

/**
 * Aliyun Intelligent Speech Interaction (智能语音交互) access tokens.
 *
 * The NLS gateway accepts only a temporary token, which CreateToken issues for an AccessKey pair.
 * Followed: help.aliyun.com "通过OpenAPI获取Token" (document 113251: GET/POST
 * https://nls-meta.cn-shanghai.aliyuncs.com/, Action=CreateToken, Version=2019-02-28, Format=JSON,
 * RegionId, Timestamp YYYY-MM-DDThh:mm:ssZ, SignatureMethod HMAC-SHA1, SignatureVersion 1.0,
 * SignatureNonce a UUID; answer Token.Id / Token.ExpireTime in epoch seconds) and the Alibaba Cloud
 * RPC (POP v1) signature mechanism it refers to, checked against that document's worked example
 * (testid/testsecret → OLeaidS1JvxuMvnyHOwuJ+uX5qY=, see aliyun-token.test.ts). Error bodies are
 * POP's `{ RequestId, HostId, Code, Message, Recommend }`.
 */

export const ALIYUN_TOKEN_URL = 'https://nls-meta.cn-shanghai.aliyuncs.com/';
const CREATE_TOKEN_VERSION = '2019-02-28';

/**
 * RFC 3986 encoding as POP defines it (Java's URLEncoder, then `+`→%20, `*`→%2A, %7E→`~`):
 * only A-Z a-z 0-9 - _ . ~ stay as they are, so encodeURIComponent's extra `!'()*` are encoded too.
 */
export function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** POP's canonicalised query: parameters sorted by name (byte order), each name and value encoded. */
export function canonicalQuery(params: Record<string, string>): string {
  return Object.keys(params)
    .filter((name) => name !== 'Signature')
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => `${percentEncode(name)}=${percentEncode(params[name] as string)}`)
    .join('&');
}

export function stringToSign(method: string, params: Record<string, string>): string {
  return `${method.toUpperCase()}&${percentEncode('/')}&${percentEncode(canonicalQuery(params))}`;
}

/** HMAC-SHA1 keyed with `secret&` over the string to sign, base64: POP signature version 1.0. */
export function signRpc(method: string, params: Record<string, string>, accessKeySecret: string): string {
  return createHmac('sha1', `${accessKeySecret}&`).update(stringToSign(method, params)).digest('base64');
}

/** ISO 8601 in UTC without milliseconds, the only form POP accepts for Timestamp. */
export const popTimestamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** `nls-meta.cn-beijing.aliyuncs.com` → cn-beijing; anything else (a local server) → cn-shanghai. */
export function regionOf(tokenUrl: string): string {
  try {
    return /^nls-meta\.([a-z0-9-]+)\.aliyuncs\.com$/.exec(new URL(tokenUrl).hostname)?.[1] ?? 'cn-shanghai';
  } catch {
    return 'cn-shanghai';
  }
}

export interface AliyunCredentials {
  accessKeyId: string;
  accessKeySecret: string;
  /** CreateToken endpoint; default the Shanghai nls-meta. */
  tokenUrl?: string;
}

export interface NlsToken {
  id: string;
  /** Epoch milliseconds. */
  expiresAt: number;
}

const TOKEN_TIMEOUT_MS = 8_000;

const fail = (kind: ProviderErrorKind, message: string, status?: number) =>
  new ProviderError(kind, message, status, RECOGNITION_SERVICE.id);

const { name: SERVICE, profile: PROFILE } = RECOGNITION_SERVICE;

/** A POP error as the console should show it: the Code only (Messages echo the string to sign). */
function tokenError(status: number, code: string): ProviderError {
  const c = code || `HTTP ${status}`;
  if (code === 'SignatureDoesNotMatch' || code === 'IncompleteSignature') {
    return fail(
      'auth',
      `${SERVICE}（阿里云）AccessKey Secret 不正确（${c}），请检查${PROFILE}中的 AccessKey Secret`,
      status,
    );
  }
  if (code.startsWith('InvalidAccessKeyId')) {
    return fail(
      'auth',
      `${SERVICE}（阿里云）AccessKey ID 不存在或已停用（${c}），请检查${PROFILE}中的 AccessKey ID`,
      status,
    );
  }
  if (code.startsWith('Forbidden') || status === 401 || status === 403) {
    return fail(
      'auth',
      `${SERVICE}（阿里云）AccessKey 无权获取访问令牌（${c}），请为该 AccessKey 授予智能语音交互权限，或检查${PROFILE}`,
      status,
    );
  }
  if (code.startsWith('InvalidTimeStamp')) {
    return fail('bad_request', `${SERVICE}（阿里云）拒绝了请求时间（${c}），请校准服务器时钟`, status);
  }
  if (code.startsWith('Throttling') || status === 429) {
    return fail('rate_limit', `${SERVICE}（阿里云）获取令牌过于频繁（${c}），请稍后再试`, status);
  }
  if (status >= 500)
    return fail('upstream', `${SERVICE}（阿里云）令牌服务暂时不可用（${c}），请稍后再试`, status);
  return fail(
    'bad_request',
    `${SERVICE}（阿里云）令牌服务拒绝了请求（${c}），请检查${PROFILE}中的令牌地址`,
    status,
  );
}

/** The signed CreateToken query string (GET), with a fresh nonce and the clock's time. */
export function createTokenQuery(credentials: AliyunCredentials, now: number, nonce = randomUUID()): string {
  const params: Record<string, string> = {
    AccessKeyId: credentials.accessKeyId,
    Action: 'CreateToken',
    Format: 'JSON',
    RegionId: regionOf(credentials.tokenUrl ?? ALIYUN_TOKEN_URL),
    SignatureMethod: 'HMAC-SHA1',
    SignatureNonce: nonce,
    SignatureVersion: '1.0',
    Timestamp: popTimestamp(now),
    Version: CREATE_TOKEN_VERSION,
  };
  const signature = signRpc('GET', params, credentials.accessKeySecret);
  return `Signature=${percentEncode(signature)}&${canonicalQuery(params)}`;
}

/** Calls CreateToken once. Failures are ProviderErrors that never carry the secret. */
export async function createToken(
  credentials: AliyunCredentials,
  options: { clock?: Clock; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<NlsToken> {
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? TOKEN_TIMEOUT_MS;
  const base = credentials.tokenUrl ?? ALIYUN_TOKEN_URL;
  const url = `${base}${base.includes('?') ? '&' : '?'}${createTokenQuery(credentials, clock.now())}`;
  const deadline = clockDeadline(clock, timeoutMs, options.signal);
  try {
    let res: Response;
    let body: unknown;
    try {
      res = await fetch(url, { headers: { accept: 'application/json' }, signal: deadline.signal });
      body = await res.json().catch(() => undefined);
    } catch {
      if (deadline.timedOut()) throw providerTimeout(timeoutMs, RECOGNITION_SERVICE);
      if (options.signal?.aborted) throw options.signal.reason;
      throw fail('network', `无法连接${SERVICE}（阿里云）的令牌服务，请检查${PROFILE}中的令牌地址与网络`);
    }
    const answer = (body ?? {}) as { Code?: unknown; Token?: { Id?: unknown; ExpireTime?: unknown } };
    if (!res.ok) throw tokenError(res.status, typeof answer.Code === 'string' ? answer.Code : '');
    const id = answer.Token?.Id;
    const expireTime = answer.Token?.ExpireTime;
    if (typeof id !== 'string' || !id || typeof expireTime !== 'number') {
      throw fail('bad_request', `${SERVICE}（阿里云）的令牌应答中没有 Token，请检查${PROFILE}中的令牌地址`);
    }
    return { id, expiresAt: expireTime * 1000 };
  } finally {
    deadline.dispose();
  }
}

/**
 * Tokens shared by every recogniser built from the same AccessKey: a token lives for hours, a
 * call for minutes, and asking CreateToken on every call would add its round trip to the first
 * words the caller hears recognised (and run into POP's rate limits on a busy line).
 */
export class AliyunTokenCache {
  private readonly entries = new Map<
    string,
    { token?: NlsToken & { obtainedAt: number }; pending?: Promise<NlsToken> }
  >();

  /** Refresh this long before expiry (capped at half the token's lifetime for short-lived tokens). */
  constructor(private readonly refreshBeforeMs = 10 * 60_000) {}

  /** The secret is hashed into the key, so an edited profile never reuses the old pair's token. */
  private key(credentials: AliyunCredentials): string {
    const secret = createHash('sha256').update(credentials.accessKeySecret).digest('hex');
    return `${credentials.tokenUrl ?? ALIYUN_TOKEN_URL}\n${credentials.accessKeyId}\n${secret}`;
  }

  async get(
    credentials: AliyunCredentials,
    options: { clock?: Clock; signal?: AbortSignal } = {},
  ): Promise<{ token: string; cached: boolean }> {
    const clock = options.clock ?? systemClock;
    const key = this.key(credentials);
    const entry = this.entries.get(key) ?? {};
    this.entries.set(key, entry);
    const { token } = entry;
    if (token) {
      const margin = Math.min(this.refreshBeforeMs, (token.expiresAt - token.obtainedAt) / 2);
      if (clock.now() < token.expiresAt - margin) return { token: token.id, cached: true };
    }
    // Concurrent calls share one CreateToken request.
    if (!entry.pending) {
      const obtainedAt = clock.now();
      entry.pending = createToken(credentials, { clock })
        .then((fresh) => {
          entry.token = { ...fresh, obtainedAt };
          return fresh;
        })
        .finally(() => {
          entry.pending = undefined;
        });
    }
    const fresh = await entry.pending;
    options.signal?.throwIfAborted();
    return { token: fresh.id, cached: false };
  }

  /** The gateway refused `token`: forget it so the next call fetches a new one. */
  invalidate(credentials: AliyunCredentials, token: string): void {
    const entry = this.entries.get(this.key(credentials));
    if (entry?.token?.id === token) entry.token = undefined;
  }
}

/** The process-wide cache recognisers use unless a test hands them their own. */
export const sharedAliyunTokens = new AliyunTokenCache();
