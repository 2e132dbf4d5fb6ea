import net from 'node:net';
import type { Clock } from '../engine/clock';
import type { SipRequest } from '../engine/telephony/sip/message';
import type { RequestSource } from '../engine/telephony/sip/user-agent';
import type { SipProxyAddress } from '../env';

/**
 * Who may start a call on this process. A new INVITE is let through only when its caller's
 * address belongs to a trunk (a peer address, or the registrar of a register trunk), and no
 * caller address may send more than `invitesPerSecond` of them.
 *
 * Behind Kamailio (SIP_PROXY) every INVITE arrives from the proxy, so the caller's address is the
 * one Kamailio wrote in X-Source-Addr after dropping any copy the caller sent. That header is
 * believed on packets from a listed proxy only: from anyone else it is ignored, or any scanner
 * could name a trunk's address in it.
 */

/** INVITEs from one caller address beyond this many a second get 503 (a looping PBX, a flood). */
export const INVITES_PER_SECOND = 50;

export type ScreenVerdict = { status: number; reason: string } | null;

export interface InviteScreenOptions {
  clock: Pick<Clock, 'now'>;
  /** Kamailio instances whose X-Source-Addr is believed; empty when no proxy is in front. */
  proxies: readonly SipProxyAddress[];
  /** The trunk an address belongs to, or null for a stranger. */
  trunkFor(address: string): unknown | null;
  /** True while the process drains: new calls must go to another worker. */
  draining(): boolean;
  invitesPerSecond?: number;
}

export interface ScreenCounters {
  /** INVITEs from addresses that are no trunk's (403). */
  refused: number;
  /** INVITEs over the per-address rate (503). */
  flooded: number;
  /** INVITEs that came while draining (503, so Kamailio tries another worker). */
  drained: number;
  /** INVITEs from a proxy without a usable X-Source-Addr (403: the caller is unknown). */
  unattributed: number;
}

export interface InviteScreen {
  screen(request: SipRequest, source: RequestSource): ScreenVerdict;
  /**
   * The caller's address as screen() judges it (X-Source-Addr from a listed proxy, else the
   * packet's source); null from a proxy that did not say. A transfer leg goes back to its trunk.
   */
  callerAddress(request: SipRequest, source: RequestSource): string | null;
  readonly counters: ScreenCounters;
}

/** `::ffff:10.0.0.1` as `10.0.0.1`, so a dual-stack socket's view matches IPv4 lists. */
const unmapped = (address: string) =>
  /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;

/** Whether an address and port are one of the proxies (IPv6 compared by value, not spelling). */
export function proxyMatcher(proxies: readonly SipProxyAddress[]): (source: RequestSource) => boolean {
  const entries = proxies.map((proxy) => {
    const list = new net.BlockList();
    list.addAddress(proxy.host, net.isIPv6(proxy.host) ? 'ipv6' : 'ipv4');
    return { list, port: proxy.port };
  });
  return (source) => {
    const address = unmapped(source.address);
    const family = net.isIPv6(address) ? 'ipv6' : net.isIPv4(address) ? 'ipv4' : null;
    if (!family) return false;
    return entries.some(
      (entry) => entry.list.check(address, family) && (entry.port === null || entry.port === source.port),
    );
  };
}

/**
 * The caller's address in X-Source-Addr as Kamailio writes it (`$su`): `sip:198.51.100.7:5060`,
 * `sip:[2001:db8::7]:5060`, possibly with `;transport=tcp`. Null unless it is exactly one such URI.
 */
export function parseSourceAddr(values: readonly string[]): { address: string; port: number | null } | null {
  if (values.length !== 1) return null;
  const match = /^sips?:(?:\[([^\]]+)\]|([\d.]+))(?::(\d{1,5}))?(?:;[^\s]*)?$/i.exec(values[0]!.trim());
  if (!match) return null;
  const address = match[1] ?? match[2]!;
  const valid = match[1] !== undefined ? net.isIPv6(address) : net.isIPv4(address);
  const port = match[3] === undefined ? null : Number(match[3]);
  if (!valid || (port !== null && (port < 1 || port > 65535))) return null;
  return { address: unmapped(address), port };
}

export function createInviteScreen(options: InviteScreenOptions): InviteScreen {
  const limit = options.invitesPerSecond ?? INVITES_PER_SECOND;
  const fromProxy = proxyMatcher(options.proxies);
  const counters: ScreenCounters = { refused: 0, flooded: 0, drained: 0, unattributed: 0 };
  const bursts = new Map<string, { second: number; count: number }>();

  const callerAddress = (request: SipRequest, source: RequestSource): string | null => {
    if (!fromProxy(source)) return unmapped(source.address);
    return parseSourceAddr(request.headers.getAll('X-Source-Addr'))?.address ?? null;
  };

  return {
    counters,
    callerAddress,
    screen(request, source) {
      if (options.draining()) {
        counters.drained++;
        return { status: 503, reason: 'Service Unavailable' };
      }
      const caller = callerAddress(request, source);
      if (caller === null) {
        // Kamailio's configuration always sets it: without it nobody knows who is calling.
        counters.unattributed++;
        counters.refused++;
        return { status: 403, reason: 'Forbidden' };
      }
      if (!options.trunkFor(caller)) {
        // SIP scanners probe every public port: refuse, count, and say nothing more.
        counters.refused++;
        return { status: 403, reason: 'Forbidden' };
      }
      const second = Math.floor(options.clock.now() / 1000);
      const burst = bursts.get(caller);
      if (!burst || burst.second !== second) {
        // Addresses seen in earlier seconds have nothing left to count.
        if (bursts.size >= 10_000) bursts.clear();
        bursts.set(caller, { second, count: 1 });
      } else if (++burst.count > limit) {
        counters.flooded++;
        return { status: 503, reason: 'Service Unavailable' };
      }
      return null;
    },
  };
}
