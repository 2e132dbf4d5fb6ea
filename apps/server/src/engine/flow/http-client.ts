import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { FlowHttpRequest, FlowHttpResult } from './types';

/**
 * The production `FlowDeps.http`: an HTTP node's request with the global fetch. A flow's author
 * chooses the URL, so the server must not become their way into the operator's own network:
 * every host (and every redirect's host) is resolved first and refused when any of its
 * addresses is private, loopback, link-local (cloud metadata at 169.254.169.254), ULA or CGNAT,
 * unless the operator allows it (FLOW_HTTP_ALLOW_PRIVATE) or `allow` says the URL is fine.
 *
 * What remains: fetch resolves the name again when it connects, so a DNS server answering
 * differently to the second lookup (rebinding) could still reach a private address. Closing
 * that needs a connect-time check (an undici dispatcher with its own lookup), which the
 * server's dependencies do not include today.
 */

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
  resolve?: (hostname: string) => Promise<string[]>;
  maxBodyBytes?: number;
}

const defaultResolve = async (hostname: string) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

function ipv4Parts(address: string): number[] | null {
  const parts = address.split('.');
  if (parts.length !== 4) return null;
  const numbers = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : Number.NaN));
  return numbers.every((n) => n >= 0 && n <= 255) ? numbers : null;
}

function privateIpv4([a = 0, b = 0, c = 0]: number[]): boolean {
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // CGNAT (RFC 6598)
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) || // IETF protocol assignments, TEST-NET-1
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) ||
    a >= 224 // multicast, reserved, broadcast
  );
}

/** The eight 16-bit groups of an IPv6 address (an embedded dotted IPv4 tail included). */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const v4 = ipv4Parts(tail[1] as string);
    if (!v4) return null;
    text = `${text.slice(0, -(tail[1] as string).length)}${((v4[0] as number) * 256 + (v4[1] as number)).toString(16)}:${((v4[2] as number) * 256 + (v4[3] as number)).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? (halves[0] as string).split(':') : [];
  const rest = halves.length === 2 && halves[1] ? (halves[1] as string).split(':') : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? head.length !== 8 : missing < 0) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest].map((g) =>
    /^[0-9a-f]{1,4}$/.test(g) ? Number.parseInt(g, 16) : Number.NaN,
  );
  return groups.length === 8 && groups.every((g) => g >= 0) ? groups : null;
}

/** Whether an IP address (v4 or v6) is one a flow may not reach. Not an IP: refused too. */
export function isPrivateAddress(address: string): boolean {
  const v4 = ipv4Parts(address);
  if (v4) return privateIpv4(v4);
  const g = ipv6Groups(address);
  if (!g) return true;
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, , g5 = 0, g6 = 0, g7 = 0] = g;
  const embedded = [g6 >> 8, g6 & 255, g7 >> 8, g7 & 255];
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroTo(8)) return true; // ::
  if (zeroTo(7) && g7 === 1) return true; // ::1
  if (zeroTo(5) && g5 === 0xffff) return privateIpv4(embedded); // IPv4-mapped
  if (zeroTo(6)) return privateIpv4(embedded); // IPv4-compatible (deprecated)
  if (g0 === 0x64 && g1 === 0xff9b) return g2 === 1 || privateIpv4(embedded); // NAT64
  if (g0 === 0x2002) return privateIpv4([g1 >> 8, g1 & 255, g2 >> 8, g2 & 255]); // 6to4
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return true; // discard-only
  if (g0 === 0x2001 && g1 === 0xdb8) return true; // documentation
  if ((g0 & 0xfe00) === 0xfc00) return true; // ULA fc00::/7
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return true; // link-local, site-local
  if ((g0 & 0xff00) === 0xff00) return true; // multicast
  return false;
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

/** Rejects when `signal` fires first (a DNS lookup cannot be cancelled, only stopped waiting for). */
function raced<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

export function createFlowHttpClient(
  options: FlowHttpClientOptions = {},
): (request: FlowHttpRequest) => Promise<FlowHttpResult> {
  const resolve = options.resolve ?? defaultResolve;
  const maxBody = options.maxBodyBytes ?? FLOW_HTTP_MAX_BODY_BYTES;

  /** Null when the host may be reached, else why not. */
  const guard = async (url: URL, signal: AbortSignal): Promise<'refused' | 'unresolved' | null> => {
    if (options.allowPrivate || options.allow?.(url)) return null;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    if (net.isIP(host)) addresses = [host];
    else {
      try {
        addresses = await raced(resolve(host), signal);
      } catch (err) {
        if (signal.aborted) throw err;
        return 'unresolved';
      }
    }
    if (addresses.length === 0) return 'unresolved';
    return addresses.some(isPrivateAddress) ? 'refused' : null;
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
        const response = await fetch(url, { method, headers, body, redirect: 'manual', signal });
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
      const cause =
        err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      return fail(`请求失败：${cause}`);
    }
  };
}
