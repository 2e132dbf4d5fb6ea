import dns from 'node:dns';
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { Agent } from 'undici';

/**
 * Requests to URLs a customer chose (a flow's HTTP node, a webhook endpoint) must not become
 * their way into the operator's own network: hosts whose addresses are private, loopback,
 * link-local (cloud metadata at 169.254.169.254), ULA or CGNAT are refused unless the operator
 * allows them. One classification for every such client, so they cannot disagree.
 */

/** Every address of a host name. */
export type ResolveHost = (hostname: string) => Promise<string[]>;

export const resolveHost: ResolveHost = async (hostname) =>
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

/** Whether an IP address (v4 or v6) is one a customer's URL may not reach. Not an IP: refused too. */
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

/** The host of a URL as an address or a name: `[::1]` loses its brackets. */
export const urlHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/**
 * Null when `url`'s host may be reached, else why not: 'refused' when any of its addresses is
 * private, 'unresolved' when the name has none. Checked before a request; a name may answer
 * differently when the request connects, which `guardedAgent` closes.
 */
export async function hostVerdict(
  url: URL,
  options: { resolve?: ResolveHost; signal?: AbortSignal } = {},
): Promise<'refused' | 'unresolved' | null> {
  const host = urlHost(url);
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      const resolving = (options.resolve ?? resolveHost)(host);
      addresses = options.signal ? await raced(resolving, options.signal) : await resolving;
    } catch (err) {
      if (options.signal?.aborted) throw err;
      return 'unresolved';
    }
  }
  if (addresses.length === 0) return 'unresolved';
  return addresses.some(isPrivateAddress) ? 'refused' : null;
}

/** Rejects when `signal` fires first (a DNS lookup cannot be cancelled, only stopped waiting for). */
export function raced<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
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

/** The error a connection refused by `guardedAgent` fails with. */
export class PrivateAddressError extends Error {
  readonly code = 'E_PRIVATE_ADDRESS';
  constructor(readonly hostname: string) {
    super(`${hostname} resolves to a private address`);
    this.name = 'PrivateAddressError';
  }
}

type LookupAddress = { address: string; family: number };
type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * An undici dispatcher whose connections check the addresses they are about to connect to, at
 * connect time: the name is resolved once, there, and a private answer fails the connection, so
 * a DNS server answering one thing to a check and another to the connect (rebinding) gains
 * nothing. IP literals skip the lookup; callers check those with `hostVerdict` first.
 */
export function guardedAgent(options: {
  allowPrivate: boolean;
  resolve?: ResolveHost;
  connections?: number;
}): Agent {
  const resolve = options.resolve;
  const lookupGuarded = (hostname: string, opts: dns.LookupOptions, callback: LookupCallback) => {
    const answer = (addresses: LookupAddress[]) => {
      if (addresses.length === 0) {
        const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        err.code = 'ENOTFOUND';
        return callback(err, []);
      }
      if (!options.allowPrivate && addresses.some((a) => isPrivateAddress(a.address)))
        return callback(new PrivateAddressError(hostname), []);
      if (opts.all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      callback(null, first.address, first.family);
    };
    if (resolve) {
      resolve(hostname).then(
        (list) => answer(list.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }))),
        (err: NodeJS.ErrnoException) => callback(err, []),
      );
      return;
    }
    dns.lookup(hostname, { ...opts, all: true, verbatim: true }, (err, addresses) =>
      err ? callback(err, []) : answer(addresses),
    );
  };
  return new Agent({
    connect: { lookup: lookupGuarded as unknown as net.LookupFunction, timeout: 10_000 },
    connections: options.connections ?? null,
    keepAliveTimeout: 10_000,
  });
}
