import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodeG711 } from '../media/g711';
import type { MediaEngine, MediaSession } from '../media/media-engine';
import { serializeRtp } from '../media/rtp';
import type { InboundOffer } from '../types';
import { type LoopbackAdapter, startLoopbackAdapter } from './adapter-test-support';
import type { SipMessage } from './message';
import type { LegMedia, SipAdapter, SipRoute } from './sip-adapter';
import {
  bindUdp,
  closeUdp,
  fillScenario,
  freeUdpPort,
  killSipps,
  runSipp,
  type SippResult,
  sippOrWarn,
  untilSippListens,
} from './sipp-test-support';
import type { SipStack } from './stack';

/*
 * SIPp scenarios (testdata/sipp-*.xml) against the SIP adapter on loopback: the call flows of
 * issue #13's "Done when" list that the plain uac/uas scenarios do not reach. SIPp checks what
 * we send with its own parser and the scenario's <ereg>/<test>/<verifyauth> actions and fails
 * the call (exit code 1) on anything unexpected; the tests check what the assistant's side sees.
 * After every test nothing may be left: transactions, dialogs, ringing calls, 2xx
 * retransmissions, legs and media sessions all back to 0.
 */

const haveSipp = sippOrWarn('SIPp scenario tests');

const HOST = '127.0.0.1';
/** Short timers keep every state's lifetime (64·T1) near 3 s, so the leak check stays quick. */
const T1 = 50;
const here = path.dirname(new URL(import.meta.url).pathname);
const scenario = (name: string) => path.join(here, 'testdata', name);
const OUR_NUMBER = '02160881000';

let dir: string;
let stack: SipStack;
let engine: MediaEngine;
let adapter: SipAdapter;
let loopback: LoopbackAdapter | undefined;
const peers = new Set<RtpPeer>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A 440 Hz tone at 8 kHz: what the assistant "says" (no synthesiser needed here). */
const tone = (ms: number) =>
  Int16Array.from({ length: ms * 8 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
const legMedia = (ms = 600): LegMedia => ({ synthesize: async () => tone(ms), recognizer: null });

/**
 * Runs one call of a scenario; `remote` makes SIPp the caller. `fill` replaces placeholders in
 * a copy of the file, for what SIPp will not take as a -key (a status code).
 */
function playScenario(
  file: string,
  options: {
    port: number;
    remote?: boolean;
    keys?: Record<string, string | number>;
    fill?: Record<string, string | number>;
    args?: string[];
  },
): Promise<SippResult> {
  return runSipp({
    scenario: options.fill ? fillScenario(scenario(file), dir, options.fill) : scenario(file),
    dir,
    port: options.port,
    keys: options.keys,
    logs: true,
    args: [...(options.args ?? []), ...(options.remote ? ['-s', OUR_NUMBER] : [])],
    remote: options.remote ? `${HOST}:${stack.transport.local.port}` : undefined,
  });
}

function expectSippPassed(result: SippResult) {
  expect({ code: result.code, errors: result.errors }, result.output).toEqual({ code: 0, errors: '' });
}

/**
 * The far end's media when the test needs to see it: receives our RTP (arrival times kept) and,
 * while `talking`, answers every packet with 20 ms of a PCMA tone, as a ringback would.
 */
class RtpPeer {
  readonly arrivals: number[] = [];
  talking = false;
  private seq = 0;
  private readonly ssrc = randomBytes(4).readUInt32BE(0);
  private readonly frame = encodeG711('PCMA', tone(20));

  private constructor(private readonly socket: dgram.Socket) {
    socket.on('message', (_packet, from) => {
      this.arrivals.push(performance.now());
      if (!this.talking) return;
      const seq = this.seq++;
      const packet = serializeRtp({
        payloadType: 8,
        sequenceNumber: seq,
        timestamp: seq * 160,
        ssrc: this.ssrc,
        payload: this.frame,
      });
      socket.send(packet, from.port, from.address);
    });
  }

  static async open(): Promise<RtpPeer> {
    const socket = await bindUdp(0);
    if (!socket) throw new Error('no port for the RTP peer');
    const peer = new RtpPeer(socket);
    peers.add(peer);
    return peer;
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** The longest silence between two of our packets, and how many came before and after it. */
  longestGap(): { gapMs: number; before: number; after: number } {
    let best = { gapMs: 0, before: 0, after: 0 };
    for (let i = 1; i < this.arrivals.length; i++) {
      const gapMs = this.arrivals[i]! - this.arrivals[i - 1]!;
      if (gapMs > best.gapMs) best = { gapMs, before: i, after: this.arrivals.length - i };
    }
    return best;
  }

  async close() {
    peers.delete(this);
    await closeUdp(this.socket);
  }
}

let restoreTransport: (() => void) | null = null;

/**
 * What our stack puts on the wire, with the time it left: timing is checked on the sending side,
 * where a loaded machine can only stretch intervals (a receiver may read two copies at once).
 */
function recordSent(): { at: number; what: string }[] {
  const transport = stack.transport;
  const { send, sendResponse } = transport;
  const sent: { at: number; what: string }[] = [];
  const describe = (message: SipMessage) =>
    'method' in message ? message.method : `${message.status} ${message.headers.get('CSeq') ?? ''}`;
  transport.send = (message, destination) => {
    sent.push({ at: performance.now(), what: describe(message) });
    return send.call(transport, message, destination);
  };
  transport.sendResponse = (response, source) => {
    sent.push({ at: performance.now(), what: describe(response) });
    return sendResponse.call(transport, response, source);
  };
  restoreTransport = () => {
    transport.send = send;
    transport.sendResponse = sendResponse;
  };
  return sent;
}

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, ms: number) {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

async function leftovers() {
  const media = await engine.stats();
  return { ...stack.stats(), legs: adapter.activeLegs, mediaSessions: media.sessions };
}

/** The caller's (left) channel energy of a stereo 16-bit WAV. */
function callerRms(file: string): number {
  const wav = fs.readFileSync(file);
  let sum = 0;
  let n = 0;
  for (let offset = 44; offset + 2 <= wav.length; offset += 4) {
    const v = wav.readInt16LE(offset);
    sum += v * v;
    n++;
  }
  return n ? Math.sqrt(sum / n) : 0;
}

const route = (port: number, extra: Partial<SipRoute> = {}): SipRoute => ({
  trunkId: 'trunk-sipp',
  destination: { protocol: 'udp', address: HOST, port },
  domain: HOST,
  callerId: OUR_NUMBER,
  callee: '13800000000',
  codecs: ['PCMA', 'PCMU'],
  ...extra,
});

const originate = (
  port: number,
  extra: { ringTimeoutMs?: number; sip?: Partial<SipRoute>; media?: LegMedia } = {},
) =>
  adapter.originate({
    callId: randomUUID(),
    from: OUR_NUMBER,
    to: '13800000000',
    ringTimeoutMs: extra.ringTimeoutMs,
    sip: route(port, extra.sip),
    media: extra.media ?? legMedia(),
  });

/** Answers the next inbound call with `handle`; resolves with what it returned. */
function nextInbound<T>(handle: (offer: InboundOffer) => Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const off = adapter.onInbound((offer) => {
      off();
      handle(offer).then(resolve, reject);
    });
  });
}

describe.skipIf(!haveSipp)('SIP adapter against SIPp scenarios', () => {
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sip-scenarios-'));
    loopback = await startLoopbackAdapter({
      timers: { t1: T1, t2: 400, t4: 200, timerD: 300 },
      rtpPorts: 20,
      recordingDir: dir,
      defaultMedia: () => legMedia(),
    });
    ({ stack, engine, adapter } = loopback);
  });

  afterEach(async () => {
    restoreTransport?.();
    restoreTransport = null;
    killSipps();
    await Promise.all([...peers].map((peer) => peer.close()));
    // Every state is bounded by 64·T1 (timers L, M, J); then nothing may be left.
    const deadline = Date.now() + 64 * T1 + 3000;
    let left = await leftovers();
    while (Object.values(left).some((n) => n !== 0) && Date.now() < deadline) {
      await sleep(100);
      left = await leftovers();
    }
    expect(left).toEqual({
      transactions: 0,
      sessions: 0,
      ringing: 0,
      retransmits: 0,
      legs: 0,
      mediaSessions: 0,
    });
  });

  afterAll(async () => {
    await loopback?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('hears and sends early media from a 183 before the 200, then the call goes on', async () => {
    const peer = await RtpPeer.open();
    peer.talking = true;
    const port = await freeUdpPort();
    const run = playScenario('sipp-early-media.xml', { port, keys: { rtp_port: peer.port } });
    await untilSippListens(port, run);
    const provisional: number[] = [];
    const callId = randomUUID();
    const result = await adapter.originate({
      callId,
      from: OUR_NUMBER,
      to: '13800000000',
      sip: route(port),
      media: legMedia(),
      onProvisional: (status) => provisional.push(status),
    });
    const sentBeforeAnswer = peer.arrivals.length;
    peer.talking = false;
    if (!result.answered) throw new Error(`not answered: ${result.outcome} ${result.detail}`);
    expect(provisional).toContain(183);
    // A second of early media is ~50 packets; a loaded machine may send fewer, never none.
    expect(sentBeforeAnswer).toBeGreaterThanOrEqual(10);
    const played = await result.leg.say('您好', { interruptible: false });
    expect(played.playedMs).toBeGreaterThanOrEqual(500);
    await result.leg.hangup();
    expectSippPassed(await run);
    // The far end only talked before the answer: energy on the caller channel is early media.
    await waitFor('the recording to close', async () => (await engine.stats()).sessions === 0, 5000);
    expect(callerRms(path.join(dir, `${callId}.wav`))).toBeGreaterThan(1000);
  });

  it('gives up a ringing call with CANCEL at the ring timeout: 未接听, and the 487 is ACKed', async () => {
    const port = await freeUdpPort();
    const run = playScenario('sipp-no-answer.xml', { port });
    await untilSippListens(port, run);
    const result = await originate(port, { ringTimeoutMs: 800 });
    expect(result).toMatchObject({ answered: false, outcome: 'no_answer' });
    expect(result.ringMs).toBeGreaterThanOrEqual(790);
    expectSippPassed(await run);
  });

  it.each([
    { status: 404, phrase: 'Not Found', cause: 16, why: '404 alone names a vacant number' },
    { status: 480, phrase: 'Temporarily Unavailable', cause: 1, why: 'Q.850 cause 1 outranks the status' },
  ])('reports a vacant number as 空号 ($why)', async ({ status, phrase, cause }) => {
    const port = await freeUdpPort();
    const run = playScenario('sipp-refuse.xml', {
      port,
      keys: { cause },
      fill: { __STATUS__: status, __PHRASE__: phrase },
    });
    await untilSippListens(port, run);
    const result = await originate(port);
    expect(result).toMatchObject({ answered: false, outcome: 'vacant' });
    if (!result.answered) expect(result.detail).toContain(String(status));
    expectSippPassed(await run);
  });

  it('answers a 401 challenge on INVITE with credentials SIPp verifies, in a new CSeq', async () => {
    const port = await freeUdpPort();
    const credentials = { username: 'trunk-user', password: 's3cret-pw' };
    const run = playScenario('sipp-digest-401.xml', {
      port,
      keys: {
        user: credentials.username,
        password: credentials.password,
        realm: 'trunk.example.cn',
        nonce: randomBytes(16).toString('hex'),
      },
    });
    await untilSippListens(port, run);
    const result = await originate(port, { sip: { credentials } });
    if (!result.answered) throw new Error(`not answered: ${result.outcome} ${result.detail}`);
    await result.leg.hangup();
    expectSippPassed(await run);
  });

  it('answers a 407 proxy challenge on INVITE and on BYE with a correct Proxy-Authorization', async () => {
    const port = await freeUdpPort();
    const credentials = { username: 'trunk-user', password: 's3cret-pw' };
    const realm = 'proxy.example.cn';
    const nonce = randomBytes(16).toString('hex');
    const run = playScenario('sipp-digest-407.xml', {
      port,
      keys: { user: credentials.username, realm, nonce },
    });
    await untilSippListens(port, run);
    const result = await originate(port, { sip: { credentials } });
    if (!result.answered) throw new Error(`not answered: ${result.outcome} ${result.detail}`);
    await result.leg.hangup();
    const done = await run;
    expectSippPassed(done);
    // Recompute the digest from what SIPp received (RFC 2617 §3.2.2 with qop=auth).
    const header = /Proxy-Authorization: (Digest .*)/.exec(done.log)?.[1] ?? '';
    const params = Object.fromEntries(
      [...header.matchAll(/(\w+)=(?:"([^"]*)"|([^\s,]+))/g)].map((m) => [m[1]!, m[2] ?? m[3] ?? '']),
    );
    expect(params).toMatchObject({
      username: credentials.username,
      realm,
      nonce,
      uri: `sip:13800000000@${HOST}`,
      qop: 'auth',
      nc: '00000001',
    });
    const md5 = (text: string) => createHash('md5').update(text).digest('hex');
    const ha1 = md5(`${credentials.username}:${realm}:${credentials.password}`);
    const ha2 = md5(`INVITE:${params.uri}`);
    expect(params.response).toBe(md5(`${ha1}:${nonce}:${params.nc}:${params.cnonce}:auth:${ha2}`));
  });

  it('reports refused trunk credentials as an authentication failure, without retrying them', async () => {
    const sent = recordSent();
    const port = await freeUdpPort();
    const run = playScenario('sipp-digest-rejected.xml', {
      port,
      keys: { realm: 'trunk.example.cn', nonce: randomBytes(16).toString('hex') },
    });
    await untilSippListens(port, run);
    const result = await originate(port, {
      sip: { credentials: { username: 'trunk-user', password: 'wrong' } },
    });
    // The operator must learn to check the trunk's password, not read a bare "401".
    expect(result).toMatchObject({
      answered: false,
      outcome: 'failed',
      detail: '线路鉴权失败，请检查中继的用户名和密码',
    });
    expectSippPassed(await run);
    expect(sent.filter((entry) => entry.what === 'INVITE')).toHaveLength(2);
  });

  it('drops an inbound call the caller CANCELs while it rings: the offer is aborted and cannot be answered', async () => {
    const handled = nextInbound(async (offer) => {
      // The assistant takes its time to pick up; the caller does not wait.
      const aborted = await Promise.race([
        new Promise<boolean>((resolve) => offer.cancelled.addEventListener('abort', () => resolve(true))),
        sleep(5000).then(() => false),
      ]);
      const answer = await offer.answer(legMedia()).then(
        async (leg) => {
          await leg.hangup();
          return 'answered';
        },
        (err: Error) => err.message,
      );
      return { aborted, answer };
    });
    const port = await freeUdpPort();
    const run = playScenario('sipp-cancel.xml', { port, remote: true });
    const { aborted, answer } = await handled;
    expect(aborted).toBe(true);
    expect(answer).not.toBe('answered');
    expectSippPassed(await run);
  });

  it('refuses an inbound call with 503 at once when no RTP port is left, instead of letting it ring', async () => {
    const taken: MediaSession[] = [];
    try {
      for (;;) taken.push(await engine.open({ callId: `filler-${taken.length}` }));
    } catch {
      // Every port of the range is in use now.
    }
    try {
      const handled = nextInbound((offer) =>
        offer.answer(legMedia()).then(
          () => 'answered',
          () => 'refused',
        ),
      );
      const port = await freeUdpPort();
      const run = playScenario('sipp-no-capacity.xml', { port, remote: true });
      expect(await handled).toBe('refused');
      expectSippPassed(await run);
    } finally {
      await Promise.all(taken.map((session) => session.close()));
    }
  });

  it('ends an outbound call on the callee’s BYE: the assistant stops speaking and stops listening', async () => {
    const port = await freeUdpPort();
    const run = playScenario('sipp-bye-from-callee.xml', { port });
    await untilSippListens(port, run);
    const result = await originate(port, { media: legMedia(4000) });
    if (!result.answered) throw new Error(`not answered: ${result.outcome} ${result.detail}`);
    const played = await result.leg.say('这是一段很长的话', { interruptible: false });
    // The BYE comes half a second in; a 4 s line must not play on to its end.
    expect(played.playedMs).toBeLessThan(3000);
    expect((await result.leg.whenEnded).by).toBe('remote');
    expect(await result.leg.listen({ timeoutMs: 2000 })).toBeNull();
    expectSippPassed(await run);
  });

  it('hangs up an inbound call with a BYE in the caller’s dialog', async () => {
    const handled = nextInbound(async (offer) => {
      const leg = await offer.answer(legMedia(300));
      await leg.say('再见', { interruptible: false });
      await leg.hangup();
      return leg.whenEnded;
    });
    const port = await freeUdpPort();
    const run = playScenario('sipp-hung-up-on.xml', { port, remote: true });
    expect((await handled).by).toBe('local');
    expectSippPassed(await run);
  });

  it('goes recvonly when the caller holds (a=sendonly) and sends again when it unholds', async () => {
    const peer = await RtpPeer.open();
    const handled = nextInbound(async (offer) => {
      const leg = await offer.answer(legMedia());
      return leg.whenEnded;
    });
    const port = await freeUdpPort();
    const run = playScenario('sipp-hold.xml', { port, remote: true, keys: { rtp_port: peer.port } });
    // SIPp checks each answer's direction and o= line (same session id, version up).
    expectSippPassed(await run);
    expect((await handled).by).toBe('remote');
    // 1.5 s on hold: our RTP stops (we answered recvonly) and resumes after the unhold.
    const gap = peer.longestGap();
    expect(gap.gapMs).toBeGreaterThanOrEqual(1000);
    expect(gap.before).toBeGreaterThanOrEqual(10);
    expect(gap.after).toBeGreaterThanOrEqual(10);
  });

  it('retransmits its 200 with T1 doubling while the caller’s ACK is lost, and the call proceeds', async () => {
    const sent = recordSent();
    const handled = nextInbound(async (offer) => {
      const leg = await offer.answer(legMedia());
      const played = await leg.say('您好', { interruptible: false });
      return { played, end: await leg.whenEnded };
    });
    const port = await freeUdpPort();
    // -nr: SIPp must see our identical 200 copies as new messages, not as retransmissions.
    const run = playScenario('sipp-ack-late.xml', { port, remote: true, args: ['-nr'] });
    const { played, end } = await handled;
    const done = await run;
    expectSippPassed(done);
    expect(done.log).toContain('200 copy 3');
    // The ACK of the third copy confirmed the call: it went on and the caller hung up.
    expect(played.playedMs).toBeGreaterThan(0);
    expect(end.by).toBe('remote');
    const copies = sent.filter((entry) => entry.what === '200 1 INVITE').map((entry) => entry.at);
    expect(copies.length).toBeGreaterThanOrEqual(3);
    // Sent at 0, T1, 3·T1: intervals of T1 then 2·T1 (timers fire late, never early).
    expect(copies[1]! - copies[0]!).toBeGreaterThanOrEqual(T1 - 2);
    expect(copies[2]! - copies[1]!).toBeGreaterThanOrEqual(2 * T1 - 2);
  });

  it('ACKs every copy of a 200 the callee retransmits, even after Timer M, keeping one call', async () => {
    const sent = recordSent();
    const port = await freeUdpPort();
    const run = playScenario('sipp-200-retransmitted.xml', { port });
    await untilSippListens(port, run);
    const result = await originate(port);
    if (!result.answered) throw new Error(`not answered: ${result.outcome} ${result.detail}`);
    await waitFor(
      'an ACK for each copy',
      () => sent.filter((entry) => entry.what === 'ACK').length >= 3,
      10_000,
    );
    // One ACK per copy, the last sent from the dialog once Timer M had ended the transaction.
    expect(sent.filter((entry) => entry.what === 'ACK')).toHaveLength(3);
    expect(stack.stats().sessions).toBe(1);
    expect(adapter.activeLegs).toBe(1);
    await result.leg.hangup();
    // SIPp fails the call unless each of its three 200s got its ACK.
    expectSippPassed(await run);
  });
});
