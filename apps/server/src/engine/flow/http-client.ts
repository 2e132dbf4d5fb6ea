import { performance } from 'node:perf_hooks';
import { fetch as guardedFetch } from 'undici';
import { guardedAgent, hostVerdict, PrivateAddressError, type ResolveHost } from '../../lib/outbound-http';
import type { FlowHttpRequest, FlowHttpResult } from './types';

/**
 * The production `FlowDeps.http`: an HTTP node's request with the global fetch. A flow's author
 * chooses the URL, so the server must not become their way into the operator's own network:
 * every host (and every redirect's host) is resolved first and refused when any of its
 * addresses is private, loopback, link-local (cloud metadata at 169.254.169.254), ULA or CGNAT,
 * unless the operator allows it (FLOW_HTTP_ALLOW_PRIVATE) or `allow` says the URL is fine.
 *
 * The check before each request gives the clear refusal; the connection itself then goes through
 * lib/outbound-http.ts's `guardedAgent`, which checks the addresses it connects to, so a DNS server
 * answering differently to the second lookup (rebinding) gains nothing. The fetch is undici's own
 * (the package's dispatcher must not be handed to Node's bundled copy).
 */

export { isPrivateAddress } from '../../lib/outbound-http';

export const FLOW_HTTP_MAX_BODY_BYTES = 256 * 1024;
export const PRIVATE_ADDRESS_REFUSED =
  '请求地址为内网地址，已拒绝（运营方可设置 FLOW_HTTP_ALLOW_PRIVATE=true 允许）';
const MAX_REDIRECTS = 5;

export interface FlowHttpClientOptions {
  /** Private addresses are allowed (FLOW_HTTP_ALLOW_PRIVATE, or tests against a local server). */
  allowPrivate?: boolean;
  /** Per-URL exceptions, e.g. the demo's built-in mock endpoint on this server. */
  allow?: (url: URL) => boolean;
  /** Every address of a host name (default: dns.lookup with `all`). */
  resolve?: ResolveHost;
  maxBodyBytes?: number;
}

const isRedirect = (status: number) => [301, 302, 303, 307, 308].includes(status);

/** The body as text, or null when it is bigger than `max` bytes (the rest is not read). */
async function readCapped(response: Response, max: number): Promise<string | null> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

export function createFlowHttpClient(
  options: FlowHttpClientOptions = {},
): (request: FlowHttpRequest) => Promise<FlowHttpResult> {
  const maxBody = options.maxBodyBytes ?? FLOW_HTTP_MAX_BODY_BYTES;

  const agent = options.allowPrivate ? null : guardedAgent({ allowPrivate: false, resolve: options.resolve });
  const send = (
    url: URL,
    init: {
      method: string;
      headers: Record<string, string>;
      body: FlowHttpRequest['body'];
      signal: AbortSignal;
    },
  ) =>
    agent && !options.allow?.(url)
      ? (guardedFetch(url, {
          ...init,
          redirect: 'manual',
          dispatcher: agent,
        }) as unknown as Promise<Response>)
      : fetch(url, { ...init, redirect: 'manual' });

  /** Null when the host may be reached, else why not. */
  const guard = async (url: URL, signal: AbortSignal): Promise<'refused' | 'unresolved' | null> => {
    if (options.allowPrivate || options.allow?.(url)) return null;
    return hostVerdict(url, { resolve: options.resolve, signal });
  };

  return async function flowHttp(request: FlowHttpRequest): Promise<FlowHttpResult> {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const fail = (error: string, status: number | null = null): FlowHttpResult => ({
      ok: false,
      status,
      error,
      ms: ms(),
    });
    const timeout = AbortSignal.timeout(request.timeoutMs);
    const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout;
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return fail('请求地址无效');
    }
    let method: string = request.method;
    let body = request.body;
    let headers = { ...request.headers };
    try {
      for (let hop = 0; ; hop++) {
        if (url.protocol !== 'http:' && url.protocol !== 'https:')
          return fail('请求地址须以 http:// 或 https:// 开头');
        const verdict = await guard(url, signal);
        if (verdict === 'refused')
          return { ok: false, status: null, error: PRIVATE_ADDRESS_REFUSED, ms: ms(), refused: true };
        if (verdict === 'unresolved') return fail(`域名解析失败：${url.hostname}`);
        const response = await send(url, { method, headers, body, signal });
        const location = response.headers.get('location');
        if (isRedirect(response.status) && location) {
          await response.body?.cancel().catch(() => undefined);
          if (hop >= MAX_REDIRECTS) return fail('重定向次数过多', response.status);
          const next = new URL(location, url);
          // Credentials meant for one site are not handed to the next.
          if (next.origin !== url.origin)
            headers = Object.fromEntries(
              Object.entries(headers).filter(([name]) => !/^(authorization|cookie)$/i.test(name)),
            );
          if (
            response.status === 303 ||
            (response.status !== 307 && response.status !== 308 && method === 'POST')
          ) {
            method = 'GET';
            body = null;
          }
          url = next;
          continue;
        }
        const text = await readCapped(response, maxBody);
        if (text === null) return fail(`响应超过 ${Math.round(maxBody / 1024)} KB`, response.status);
        let parsed: unknown = text;
        if (/json/i.test(response.headers.get('content-type') ?? '')) {
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = text;
          }
        }
        if (response.status >= 200 && response.status < 300)
          return { ok: true, status: response.status, body: parsed, ms: ms() };
        return fail(`HTTP ${response.status}`, response.status);
      }
    } catch (err) {
      if (timeout.aborted) return fail(`请求超时（${request.timeoutMs} ms）`);
      if (request.signal?.aborted) return fail('请求已取消');
      if (causes(err).some((e) => e instanceof PrivateAddressError))
        return { ok: false, status: null, error: PRIVATE_ADDRESS_REFUSED, ms: ms(), refused: true };
      const cause =
        err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      return fail(`请求失败：${cause}`);
    }
  };
}

/** An error and its causes, innermost last: undici wraps a refused connect in a fetch error. */
function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = err; e !== undefined && chain.length < 8; e = (e as { cause?: unknown })?.cause) chain.push(e);
  return chain;
}
