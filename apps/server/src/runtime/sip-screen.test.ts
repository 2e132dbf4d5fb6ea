import { describe, expect, it } from 'vitest';
import { parse, type SipRequest } from '../engine/telephony/sip/message';
import type { RequestSource } from '../engine/telephony/sip/user-agent';
import { parseSipProxyList } from '../env';
import { createInviteScreen, INVITES_PER_SECOND, parseSourceAddr } from './sip-screen';

/*
 * Who may start a call: the trunk check and the rate limit apply to the caller's address, which
 * behind Kamailio is the one in X-Source-Addr, and only when the packet really is Kamailio's.
 */

const TRUNK_PEER = '198.51.100.7';
const STRANGER = '203.0.113.66';
const KAMAILIO = '10.0.0.10';

function invite(sourceAddr: string[] = []): SipRequest {
  const text = [
    'INVITE sip:02160881000@10.0.0.11:5070 SIP/2.0',
    'Via: SIP/2.0/UDP 10.0.0.10:5060;branch=z9hG4bKk1',
    'From: <sip:13800138000@carrier.example.cn>;tag=a',
    'To: <sip:02160881000@10.0.0.11>',
    'Call-ID: screen-1',
    'CSeq: 1 INVITE',
    'Contact: <sip:13800138000@198.51.100.7:5060>',
    ...sourceAddr.map((value) => `X-Source-Addr: ${value}`),
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  const result = parse(Buffer.from(text));
  if (!result.ok || !('method' in result.message)) throw new Error('bad test INVITE');
  return result.message;
}

const from = (address: string, port = 5060): RequestSource => ({ protocol: 'udp', address, port });

function setup(options: { proxy?: string; trunkPeers?: string[] } = {}) {
  let now = 1_000_000;
  let draining = false;
  const peers = new Set(options.trunkPeers ?? [TRUNK_PEER]);
  const screen = createInviteScreen({
    clock: { now: () => now },
    proxies: options.proxy ? (parseSipProxyList(options.proxy) ?? []) : [],
    trunkFor: (address) => (peers.has(address) ? { id: 'trunk-1' } : null),
    draining: () => draining,
  });
  return {
    screen,
    advance: (ms: number) => {
      now += ms;
    },
    drain: () => {
      draining = true;
    },
  };
}

const FORBIDDEN = { status: 403, reason: 'Forbidden' };
const UNAVAILABLE = { status: 503, reason: 'Service Unavailable' };

describe('INVITE screening', () => {
  it('without a proxy: a trunk peer is let through, anyone else refused whatever X-Source-Addr it writes', () => {
    const { screen } = setup();
    expect(screen.screen(invite(), from(TRUNK_PEER))).toBeNull();
    expect(screen.screen(invite(), from(STRANGER))).toEqual(FORBIDDEN);
    // A scanner naming the trunk's address gains nothing.
    expect(screen.screen(invite([`sip:${TRUNK_PEER}:5060`]), from(STRANGER))).toEqual(FORBIDDEN);
    expect(screen.counters.refused).toBe(2);
  });

  it("behind Kamailio: the caller is the one in Kamailio's X-Source-Addr, not Kamailio", () => {
    const { screen } = setup({ proxy: KAMAILIO });
    expect(screen.screen(invite([`sip:${TRUNK_PEER}:5060`]), from(KAMAILIO))).toBeNull();
    expect(screen.screen(invite([`sip:${STRANGER}:5060`]), from(KAMAILIO))).toEqual(FORBIDDEN);
    // Kamailio itself is no trunk: an INVITE it sent without naming the caller is refused.
    expect(screen.screen(invite(), from(KAMAILIO))).toEqual(FORBIDDEN);
    expect(screen.counters).toMatchObject({ refused: 2, unattributed: 1 });
  });

  it('refuses an X-Source-Addr from the proxy that is not exactly one sip:IP:port', () => {
    const { screen } = setup({ proxy: KAMAILIO });
    for (const values of [
      [`sip:${TRUNK_PEER}:5060`, `sip:${TRUNK_PEER}:5060`],
      [`${TRUNK_PEER}:5060`],
      ['sip:carrier.example.cn:5060'],
      [`sip:${TRUNK_PEER}:99999`],
      [`sip:${TRUNK_PEER}:5060 junk`],
    ]) {
      expect(screen.screen(invite(values), from(KAMAILIO)), values.join(' | ')).toEqual(FORBIDDEN);
    }
  });

  it("ignores X-Source-Addr from the proxy's address on another port when SIP_PROXY names a port", () => {
    const { screen } = setup({ proxy: `${KAMAILIO}:5060`, trunkPeers: [TRUNK_PEER] });
    expect(screen.screen(invite([`sip:${TRUNK_PEER}:5060`]), from(KAMAILIO, 5060))).toBeNull();
    expect(screen.screen(invite([`sip:${TRUNK_PEER}:5060`]), from(KAMAILIO, 5080))).toEqual(FORBIDDEN);
  });

  it('knows an IPv6 proxy however its address is spelt, and reads IPv6 callers with a transport', () => {
    const { screen } = setup({ proxy: '[fd00::10]:5060', trunkPeers: ['2001:db8::7'] });
    expect(
      screen.screen(invite(['sip:[2001:db8::7]:5061;transport=tcp']), from('fd00:0:0::10', 5060)),
    ).toBeNull();
    expect(parseSourceAddr(['sip:[2001:db8::7]:5061;transport=tcp'])).toEqual({
      address: '2001:db8::7',
      port: 5061,
    });
    expect(parseSourceAddr(['sip:[198.51.100.7]:5060'])).toBeNull();
  });

  it('rate-limits each caller behind the proxy on its own, not the proxy as one source', () => {
    const { screen, advance } = setup({ proxy: KAMAILIO, trunkPeers: [TRUNK_PEER, '198.51.100.8'] });
    const viaProxy = (caller: string) => screen.screen(invite([`sip:${caller}:5060`]), from(KAMAILIO));
    for (let i = 0; i < INVITES_PER_SECOND; i++) expect(viaProxy(TRUNK_PEER), `INVITE ${i + 1}`).toBeNull();
    expect(viaProxy(TRUNK_PEER)).toEqual(UNAVAILABLE);
    // Another carrier behind the same proxy is not held back by the first one's burst.
    expect(viaProxy('198.51.100.8')).toBeNull();
    advance(1000);
    expect(viaProxy(TRUNK_PEER)).toBeNull();
    expect(screen.counters.flooded).toBe(1);
  });

  it('answers every new INVITE 503 while draining, so Kamailio retries it on another worker', () => {
    const { screen, drain } = setup({ proxy: KAMAILIO });
    drain();
    expect(screen.screen(invite([`sip:${TRUNK_PEER}:5060`]), from(KAMAILIO))).toEqual(UNAVAILABLE);
    expect(screen.counters.drained).toBe(1);
  });
});
