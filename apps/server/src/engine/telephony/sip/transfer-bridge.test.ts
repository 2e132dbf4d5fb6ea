import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../clock';
import { loadVad, type Vad } from '../../speech/vad';
import { DtmfSender, decodeTelephoneEvent } from '../media/dtmf';
import { decodeG711, encodeG711, type G711Codec } from '../media/g711';
import { MediaEngine } from '../media/media-engine';
import { parseRtp, type RtpPacket, serializeRtp } from '../media/rtp';
import type { CallLeg, InboundOffer } from '../types';
import { parseNameAddr, parseUri, type SipRequest } from './message';
import { answerOffer, applyAnswer, createOffer } from './sdp';
import { createSipAdapter, type LegMedia, type SipAdapter, type SipRoute } from './sip-adapter';
import { freePortRange, PORT_BANDS } from './sipp-test-support';
import { createSipStack, type SipStack } from './stack';
import type { IncomingInvite, InviteSession, RequestSource } from './user-agent';

/*
 * Transfer on a line that refuses REFER, on loopback. A second SIP stack of ours plays the
 * carrier: an INVITE to the caller's number reaches the "caller" (its RTP is a raw UDP socket),
 * one to 8001 the "human" agent (another raw socket, PCMU where the caller is PCMA), one to 8002
 * a busy agent. The caller's phone answers REFER with 405, or with 202 and a NOTIFY saying the
 * target was busy.
 */

const HOST = '127.0.0.1';
const CALLER = '13800000001';
const OUR_NUMBER = '02160881000';

let dir: string;
let ours: SipStack;
let carrier: SipStack;
let engine: MediaEngine;
let vad: Vad;
let adapter: SipAdapter;
/** What the adapter's inbound calls route their transfer leg by; set per test. */
let routeBack: SipRoute | null = null;
const inboundRouteCalls: { source: RequestSource; ourNumber: string }[] = [];
const sockets = new Set<dgram.Socket>();
const timers = new Set<NodeJS.Timeout>();

const tone = (frequency: number, ms: number, amplitude = 8000) =>
  Int16Array.from({ length: ms * 8 }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / 8000)),
  );
const legMedia: LegMedia = { synthesize: async () => tone(440, 400), recognizer: null };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const rms = (pcm: Int16Array) =>
  pcm.length ? Math.sqrt(pcm.reduce((s, v) => s + v * v, 0) / pcm.length) : 0;

async function until(what: string, check: () => boolean, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'transfer-bridge-'));
  const fast = { host: HOST, port: 0, protocols: ['udp'] as const, t1: 100, t2: 800, t4: 200, timerD: 500 };
  [ours, carrier] = await Promise.all([
    createSipStack({ ...fast, protocols: ['udp'] }),
    createSipStack({ ...fast, protocols: ['udp'] }),
  ]);
  // Probed, in the band kept for RTP: a blind draw could meet a port bound elsewhere.
  const rtpBase = await freePortRange(20, { band: PORT_BANDS.rtp });
  engine = await MediaEngine.start({
    rtpPortMin: rtpBase,
    rtpPortMax: rtpBase + 19,
    bindAddress: HOST,
    // Short, for the bridge's RTP timeout; every phone here sends RTP until it hangs up.
    inactivityTimeoutMs: 3000,
  });
  vad = await loadVad();
  adapter = createSipAdapter({
    stack: ours,
    media: engine,
    vad,
    clock: systemClock,
    mediaAddress: HOST,
    recordingDir: dir,
    defaultMedia: () => legMedia,
    inboundRoute: ({ source, ourNumber }) => {
      inboundRouteCalls.push({ source, ourNumber });
      return routeBack;
    },
  });
  carrier.agent.onInvite((invite) => void carrierAnswers(invite));
});

afterEach(() => {
  for (const timer of timers) clearInterval(timer);
  timers.clear();
});

afterAll(async () => {
  for (const socket of sockets) socket.close();
  await adapter?.close();
  await engine?.close();
  await Promise.all([ours?.close(), carrier?.close()]);
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A phone's media: a raw UDP socket that keeps what arrives and can send RTP. */
async function phone(codec: G711Codec) {
  const socket = dgram.createSocket('udp4');
  sockets.add(socket);
  await new Promise<void>((resolve) => socket.bind(0, HOST, () => resolve()));
  const received: { at: number; packet: RtpPacket }[] = [];
  socket.on('message', (datagram) => {
    const parsed = parseRtp(datagram);
    if (parsed.ok) received.push({ at: Date.now(), packet: parsed.packet });
  });
  let seq = 100;
  let timestamp = 16000;
  let talking: NodeJS.Timeout | null = null;
  const phoneState = {
    codec,
    port: socket.address().port,
    received,
    /** Where the call's RTP goes: learnt from our SDP. */
    remote: { port: 0, audioPt: codec === 'PCMA' ? 8 : 0, eventPt: 101 },
    send(payloadType: number, payload: Uint8Array, ts = timestamp) {
      socket.send(
        serializeRtp({ payloadType, sequenceNumber: seq, timestamp: ts, ssrc: 999, payload }),
        phoneState.remote.port,
        HOST,
      );
      seq = (seq + 1) & 0xffff;
    },
    /** Sends `pcm` in real time, 20 ms a packet, in place of what it sent so far, until hush(). */
    talk(pcmOf: () => Int16Array) {
      phoneState.hush();
      const timer = setInterval(() => {
        phoneState.send(phoneState.remote.audioPt, encodeG711(codec, pcmOf()));
        timestamp = (timestamp + 160) >>> 0;
      }, 20);
      timers.add(timer);
      talking = timer;
    },
    /** No more RTP: a phone that crashed or lost its network. */
    hush() {
      if (talking) clearInterval(talking);
      if (talking) timers.delete(talking);
      talking = null;
    },
    async pressKey(digit: string) {
      const sender = new DtmfSender();
      sender.enqueue(digit);
      const ts = timestamp;
      for (let packet = sender.next(ts); packet; packet = sender.next(ts)) {
        phoneState.send(phoneState.remote.eventPt, packet.payload, packet.timestamp);
        await sleep(20);
      }
    },
    /** The audio that arrived after `since`, decoded. */
    heardSince(since: number) {
      const packets = received.filter(
        (r) => r.at >= since && r.packet.payloadType === phoneState.remote.audioPt,
      );
      return Int16Array.from(packets.flatMap((r) => [...decodeG711(codec, r.packet.payload)]));
    },
    keysSince(since: number) {
      return received
        .filter((r) => r.at >= since && r.packet.payloadType === phoneState.remote.eventPt)
        .map((r) => decodeTelephoneEvent(r.packet.payload)?.event);
    },
  };
  return phoneState;
}
type Phone = Awaited<ReturnType<typeof phone>>;

/** Points a phone at the media its SDP counterpart named. */
function learnRemote(p: Phone, sdp: string) {
  const port = /m=audio (\d+)/.exec(sdp)?.[1];
  const event = /a=rtpmap:(\d+) telephone-event/.exec(sdp)?.[1];
  p.remote.port = Number(port);
  if (event) p.remote.eventPt = Number(event);
}

const userOf = (value: string | undefined) => parseUri(parseNameAddr(value ?? '')?.uri ?? value ?? '')?.user;

interface CarrierCall {
  user: string;
  from: string;
  session?: InviteSession;
  /** In-dialog requests the carrier side got, by method. */
  requests: string[];
  /** The last REFER's Referred-By. */
  referredBy?: string;
}

/** What the carrier does with each number, set per test. */
const carrierPlan = {
  caller: null as Phone | null,
  human: null as Phone | null,
  /** 'refuse': REFER gets 405; 'accept-busy': 202, then a NOTIFY reporting 486. */
  refer: 'refuse' as 'refuse' | 'accept-busy',
  calls: [] as CarrierCall[],
};

async function carrierAnswers(invite: IncomingInvite) {
  const user = parseUri(invite.request.uri)?.user ?? '';
  const call: CarrierCall = { user, from: userOf(invite.request.headers.get('From')) ?? '', requests: [] };
  carrierPlan.calls.push(call);
  if (user === '8002') {
    invite.reject(486, 'Busy Here');
    return;
  }
  if (user === '8003') {
    // Rings and rings: nobody at that desk picks up.
    invite.progress(180);
    return;
  }
  const p = user === '8001' ? carrierPlan.human : user === CALLER ? carrierPlan.caller : null;
  if (!p) {
    invite.reject(404, 'Not Found');
    return;
  }
  const offer = invite.request.body.toString('utf8');
  const answered = answerOffer(offer, { address: HOST, port: p.port, codecs: [p.codec] });
  if (!answered.ok) throw new Error(answered.reason);
  learnRemote(p, offer);
  // Phones send RTP all the time, silence included: the media times a silent line out.
  p.talk(() => new Int16Array(160));
  const { session } = await invite.answer(answered.sdp);
  call.session = session;
  serveInDialog(call, session);
}

function serveInDialog(call: CarrierCall, session: InviteSession) {
  session.handlers.onRequest = (request: SipRequest) => {
    call.requests.push(request.method);
    if (request.method !== 'REFER') return 405;
    call.referredBy = request.headers.get('Referred-By');
    if (carrierPlan.refer === 'refuse') return 405;
    const cseq = request.headers.get('CSeq')?.split(' ')[0];
    setTimeout(() => {
      void session.send('NOTIFY', {
        headers: [
          ['Event', `refer;id=${cseq}`],
          ['Subscription-State', 'terminated;reason=noresource'],
        ],
        body: Buffer.from('SIP/2.0 486 Busy Here\r\n'),
        contentType: 'message/sipfrag',
      });
    }, 30);
    return 202;
  };
}

const route = (): SipRoute => ({
  trunkId: 'trunk-1',
  destination: { protocol: 'udp', address: HOST, port: carrier.transport.local.port },
  domain: HOST,
  callerId: OUR_NUMBER,
  callee: CALLER,
  codecs: ['PCMA', 'PCMU'],
});

/** The assistant calls the caller's phone through the carrier; the phone starts talking (1 kHz). */
async function outboundCall(callId: string) {
  const caller = await phone('PCMA');
  carrierPlan.caller = caller;
  const result = await adapter.originate({
    callId,
    from: OUR_NUMBER,
    to: CALLER,
    sip: route(),
    media: legMedia,
  });
  if (!result.answered) throw new Error(`not answered: ${result.detail}`);
  // The phone's side is confirmed when our ACK arrives, a moment after our side.
  const found = () => carrierPlan.calls.find((c) => c.user === CALLER && c.session && !c.session.ended);
  await until('the caller’s phone confirmed the call', () => found() !== undefined);
  const call = found() as CarrierCall;
  caller.talk(() => tone(1000, 20));
  return { leg: result.leg, caller, call };
}

async function expectNoLeaks() {
  await until(
    'everything released',
    () => adapter.activeLegs === 0 && ours.stats().sessions === 0 && carrier.stats().sessions === 0,
  );
  // The media closes just after the leg ends: the port comes back a worker round trip later.
  const deadline = Date.now() + 5000;
  while ((await engine.stats()).portsInUse > 0 && Date.now() < deadline) await sleep(20);
  expect((await engine.stats()).portsInUse).toBe(0);
}

const voicedPitches = (pcm: Int16Array) => {
  const pitches: number[] = [];
  for (let f = 0; (f + 1) * 160 <= pcm.length; f++) {
    const frame = pcm.subarray(f * 160, f * 160 + 160);
    if (rms(frame) > 3000) pitches.push(zeroCrossingHz(frame));
  }
  return pitches;
};

const voicedFrames = (pcm: Int16Array) => {
  let voiced = 0;
  for (let f = 0; (f + 1) * 160 <= pcm.length; f++)
    if (rms(pcm.subarray(f * 160, f * 160 + 160)) > 1500) voiced++;
  return voiced;
};

const zeroCrossingHz = (pcm: Int16Array) => {
  let crossings = 0;
  for (let i = 1; i < pcm.length; i++) if ((pcm[i - 1] as number) < 0 !== (pcm[i] as number) < 0) crossings++;
  return (crossings / 2) * (8000 / pcm.length);
};

describe('transfer when the line refuses REFER', () => {
  it('bridges a second call to the agent: the caller’s voice and keys reach the agent, the recording ends at the transfer, the caller’s BYE ends both', async () => {
    carrierPlan.refer = 'refuse';
    carrierPlan.human = await phone('PCMU');
    const human = carrierPlan.human;
    const callId = 'bridge-outbound';
    const { leg, caller, call } = await outboundCall(callId);
    await leg.say('您好', { interruptible: false });

    const outcome = await leg.transfer('8001');
    const transferredAt = Date.now();
    expect(outcome).toEqual({ ok: true, detail: 'bridged' });
    expect(call.requests).toContain('REFER');
    await until('the agent’s phone confirmed the call', () =>
      carrierPlan.calls.some((c) => c.user === '8001' && c.session),
    );
    const agentCall = carrierPlan.calls.find((c) => c.user === '8001') as CarrierCall;
    // The agent sees the number the assistant called from, not the caller's.
    expect(agentCall.from).toBe(OUR_NUMBER);

    // The assistant's recording is complete now: the header carries its length.
    const wav = fs.readFileSync(path.join(dir, `${callId}.wav`));
    expect(wav.readUInt32LE(40)).toBeGreaterThan(0);
    expect(wav.readUInt32LE(40)).toBe(wav.length - 44);

    // The call engine ends its session: the record is over, the caller stays connected.
    await leg.hangup();
    expect(leg.ended?.by).toBe('local');
    await expect(leg.whenEnded).resolves.toMatchObject({ by: 'local' });
    await sleep(600);
    expect(call.session?.state).toBe('confirmed');
    expect(call.requests).not.toContain('BYE');
    expect(adapter.activeLegs).toBe(1);

    // The caller's 1 kHz tone, PCMA in, arrives at the agent as PCMU at the same pitch.
    const heard = human.heardSince(transferredAt);
    expect(voicedFrames(heard)).toBeGreaterThanOrEqual(15);
    // Pitch per voiced 20 ms frame: a frame the bridge filled with silence while the machine was
    // busy says nothing about transcoding, so it must not pull the figure down.
    const pitches = voicedPitches(heard.subarray(heard.length - 4000));
    expect(pitches.length).toBeGreaterThanOrEqual(10);
    const median = pitches.sort((a, b) => a - b)[Math.floor(pitches.length / 2)] as number;
    expect(median).toBeGreaterThan(950);
    expect(median).toBeLessThan(1050);

    // A key the agent presses reaches the caller as telephone events, and the other way.
    const beforeKeys = Date.now();
    await human.pressKey('5');
    await caller.pressKey('9');
    await sleep(200);
    expect(new Set(caller.keysSince(beforeKeys))).toEqual(new Set([5]));
    expect(new Set(human.keysSince(beforeKeys))).toEqual(new Set([9]));

    // Nothing of the bridged conversation went into the assistant's recording.
    expect(fs.readFileSync(path.join(dir, `${callId}.wav`)).length).toBe(wav.length);

    // The caller hangs up: the agent's call is ended with BYE.
    await call.session?.bye();
    await until('the agent’s call ended', () => agentCall.session?.state === 'ended');
    expect(agentCall.session?.ended?.by).toBe('remote');
    await expectNoLeaks();
  });

  it('an inbound call goes out again through the trunk it came from; the agent’s BYE ends the caller’s call', async () => {
    carrierPlan.refer = 'refuse';
    carrierPlan.human = await phone('PCMA');
    const human = carrierPlan.human;
    const caller = await phone('PCMA');
    routeBack = { ...route(), callee: '' };
    const answered = new Promise<CallLeg>((resolve) => {
      const off = adapter.onInbound(async (offer: InboundOffer) => {
        off();
        resolve(await offer.answer(legMedia));
      });
    });
    const offer = createOffer({ address: HOST, port: caller.port, codecs: ['PCMA'] });
    const dialled = await carrier.agent.invite({
      uri: `sip:${OUR_NUMBER}@${HOST}:${ours.transport.local.port}`,
      from: `<sip:${CALLER}@${HOST}>`,
      to: `<sip:${OUR_NUMBER}@${HOST}>`,
      destination: { protocol: 'udp', address: HOST, port: ours.transport.local.port },
      sdp: offer.sdp,
    });
    if (!dialled.answered) throw new Error('inbound call not answered');
    const applied = applyAnswer(offer, dialled.session.remoteSdp);
    if (!applied.ok) throw new Error(applied.reason);
    caller.remote.port = applied.negotiated.remotePort;
    const callerRequests: CarrierCall = {
      user: OUR_NUMBER,
      from: CALLER,
      session: dialled.session,
      requests: [],
    };
    serveInDialog(callerRequests, dialled.session);
    caller.talk(() => tone(1000, 20));
    const leg = await answered;

    const outcome = await leg.transfer('8001');
    expect(outcome).toEqual({ ok: true, detail: 'bridged' });
    expect(inboundRouteCalls.at(-1)).toMatchObject({
      ourNumber: OUR_NUMBER,
      source: { address: HOST, port: carrier.transport.local.port },
    });
    await until(
      'the agent’s phone confirmed the call',
      () => carrierPlan.calls.at(-1)?.session !== undefined,
    );
    const agentCall = carrierPlan.calls.at(-1) as CarrierCall;
    expect(agentCall.user).toBe('8001');
    expect(agentCall.from).toBe(OUR_NUMBER);
    await leg.hangup();
    const since = Date.now();
    await sleep(500);
    expect(voicedFrames(human.heardSince(since))).toBeGreaterThanOrEqual(10);

    await agentCall.session?.bye();
    await until('the caller’s call ended', () => dialled.session.state === 'ended');
    expect(dialled.session.ended?.by).toBe('remote');
    await expectNoLeaks();
  });

  it('an agent who is busy fails the transfer and the assistant keeps the call', async () => {
    carrierPlan.refer = 'refuse';
    const { leg, caller, call } = await outboundCall('bridge-busy');
    const outcome = await leg.transfer('8002');
    expect(outcome).toEqual({ ok: false, detail: '人工坐席忙线', outcome: 'busy' });
    expect(carrierPlan.calls.filter((c) => c.user === '8002')).not.toHaveLength(0);
    expect(leg.ended).toBeNull();
    expect(call.session?.state).toBe('confirmed');
    // The assistant still talks to the caller.
    const since = Date.now();
    await leg.say('抱歉，坐席正忙', { interruptible: false });
    await sleep(100);
    expect(voicedFrames(caller.heardSince(since))).toBeGreaterThanOrEqual(10);
    expect(adapter.activeLegs).toBe(1);
    await leg.hangup();
    await until('the caller got our BYE', () => call.session?.state === 'ended');
    await expectNoLeaks();
  });

  it('an inbound call from a trunk the adapter cannot route back to is not transferable', async () => {
    carrierPlan.refer = 'refuse';
    routeBack = null;
    const caller = await phone('PCMA');
    const answered = new Promise<CallLeg>((resolve) => {
      const off = adapter.onInbound(async (offer: InboundOffer) => {
        off();
        resolve(await offer.answer(legMedia));
      });
    });
    const offer = createOffer({ address: HOST, port: caller.port, codecs: ['PCMA'] });
    const dialled = await carrier.agent.invite({
      uri: `sip:${OUR_NUMBER}@${HOST}:${ours.transport.local.port}`,
      from: `<sip:${CALLER}@${HOST}>`,
      to: `<sip:${OUR_NUMBER}@${HOST}>`,
      destination: { protocol: 'udp', address: HOST, port: ours.transport.local.port },
      sdp: offer.sdp,
    });
    if (!dialled.answered) throw new Error('inbound call not answered');
    const applied = applyAnswer(offer, dialled.session.remoteSdp);
    if (!applied.ok) throw new Error(applied.reason);
    caller.remote.port = applied.negotiated.remotePort;
    caller.talk(() => new Int16Array(160));
    const leg = await answered;
    const before = carrierPlan.calls.length;
    expect(await leg.transfer('8001')).toEqual({ ok: false, detail: '线路不支持转接', outcome: 'failed' });
    expect(carrierPlan.calls).toHaveLength(before);
    expect(leg.ended).toBeNull();
    await leg.hangup();
    await expectNoLeaks();
  });
});

describe('transfer options (an IVR flow’s 转接 node)', () => {
  it('the agent sees the number the flow chose, and one who never answers is given up at the ring timeout', async () => {
    carrierPlan.refer = 'refuse';
    carrierPlan.human = await phone('PCMA');
    const { leg, call } = await outboundCall('bridge-caller-id');
    const before = Date.now();
    const unanswered = await leg.transfer('8003', { ringTimeoutMs: 800 });
    expect(unanswered).toEqual({ ok: false, detail: '人工坐席无人接听', outcome: 'no_answer' });
    expect(Date.now() - before).toBeGreaterThanOrEqual(700);
    expect(Date.now() - before).toBeLessThan(5_000);
    expect(leg.ended).toBeNull();

    expect(await leg.transfer('8001', { callerId: CALLER })).toEqual({ ok: true, detail: 'bridged' });
    await until('the agent’s phone confirmed the call', () =>
      carrierPlan.calls.some((c) => c.user === '8001' && c.session && !c.session.ended),
    );
    const agentCall = carrierPlan.calls.findLast((c) => c.user === '8001') as CarrierCall;
    expect(agentCall.from).toBe(CALLER);
    await leg.hangup();
    await call.session?.bye();
    await until('the agent’s call ended', () => agentCall.session?.state === 'ended');
    await expectNoLeaks();
  });
});

describe('a bridge on a dead line', () => {
  it('ends with BYE to both sides when one of them stops sending RTP', async () => {
    carrierPlan.refer = 'refuse';
    carrierPlan.human = await phone('PCMU');
    const { leg, call } = await outboundCall('bridge-rtp-timeout');
    expect(await leg.transfer('8001')).toEqual({ ok: true, detail: 'bridged' });
    await leg.hangup();
    await until('the agent’s phone confirmed the call', () =>
      carrierPlan.calls.some((c) => c.user === '8001' && c.session && !c.session.ended),
    );
    const agentCall = carrierPlan.calls.findLast((c) => c.user === '8001') as CarrierCall;
    await sleep(300);
    expect(agentCall.session?.state).toBe('confirmed');
    // The agent's phone loses its network: no RTP, no BYE.
    carrierPlan.human.hush();
    await until(
      'both calls ended',
      () => call.session?.state === 'ended' && agentCall.session?.state === 'ended',
      10_000,
    );
    expect(call.session?.ended?.by).toBe('remote');
    expect(agentCall.session?.ended?.by).toBe('remote');
    await expectNoLeaks();
  });
});

describe('transfer when the line takes REFER', () => {
  it('a target reported busy in the NOTIFY is a failed transfer, and no second call is made', async () => {
    carrierPlan.refer = 'accept-busy';
    const { leg, call } = await outboundCall('refer-busy');
    const before = carrierPlan.calls.length;
    const outcome = await leg.transfer('8001', { callerId: CALLER });
    // The number the flow chose for the agent to see goes with the REFER.
    expect(parseUri(parseNameAddr(call.referredBy ?? '')?.uri ?? '')?.user).toBe(CALLER);
    expect(outcome.ok).toBe(false);
    expect(outcome.detail).toContain('486');
    // An IVR flow takes its 忙线 branch.
    expect(outcome.outcome).toBe('busy');
    expect(call.requests).toContain('REFER');
    await sleep(200);
    expect(carrierPlan.calls).toHaveLength(before);
    expect(leg.ended).toBeNull();
    expect(call.session?.state).toBe('confirmed');
    await leg.hangup();
    await expectNoLeaks();
  });
});

describe('after the transfers', () => {
  it('closing the adapter ends a live bridge with BYE to both sides', async () => {
    carrierPlan.refer = 'refuse';
    carrierPlan.human = await phone('PCMA');
    const { leg, call } = await outboundCall('bridge-close');
    expect(await leg.transfer('8001')).toEqual({ ok: true, detail: 'bridged' });
    await leg.hangup();
    await until('the agent’s phone confirmed the call', () =>
      carrierPlan.calls.some((c) => c.user === '8001' && c.session && !c.session.ended),
    );
    const agentCall = carrierPlan.calls.findLast((c) => c.user === '8001') as CarrierCall;
    expect(adapter.activeLegs).toBe(1);
    await adapter.close();
    expect(adapter.activeLegs).toBe(0);
    await until(
      'both phones got BYE',
      () => call.session?.state === 'ended' && agentCall.session?.state === 'ended',
    );
    expect(call.session?.ended?.by).toBe('remote');
    expect(agentCall.session?.ended?.by).toBe('remote');
    await expectNoLeaks();
  });

  it('leaves no SIP transaction behind', async () => {
    // Checked once for the whole file: a server transaction of a non-INVITE lingers 64·T1
    // (6.4 s here) to absorb retransmissions, and waiting for it after each test costs minutes.
    await until(
      'transactions finished',
      () => ours.stats().transactions === 0 && carrier.stats().transactions === 0,
      15_000,
    );
    expect(adapter.activeLegs).toBe(0);
  }, 20_000);
});
