import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallLeg, InboundOffer } from '../types';
import { type LoopbackAdapter, startLoopbackAdapter } from './adapter-test-support';
import { type LegMedia, nationalNumber, type SipAdapter } from './sip-adapter';
import {
  freeMediaPort,
  freeUdpPort,
  killSipps,
  playPcapScenario,
  runSipp,
  untilSippListens,
} from './sipp-test-support';
import { createSipStack, type SipStack } from './stack';

/*
 * The SIP adapter end to end on loopback with SIPp as the far end (Debian sip-tester, installed
 * by .ci/run): real signalling, real RTP through the media worker, real VAD.
 */

const HOST = '127.0.0.1';
const here = path.dirname(new URL(import.meta.url).pathname);
const BUSY_SCENARIO = path.join(here, 'testdata', 'sipp-busy.xml');

let dir: string;
let stack: SipStack;
let adapter: SipAdapter;
let loopback: LoopbackAdapter | undefined;

/** 600 ms of a 440 Hz tone: what the assistant "says" (no synthesiser needed for signalling tests). */
const tone = () =>
  Int16Array.from({ length: 4800 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));
const legMedia: LegMedia = { synthesize: async () => tone(), recognizer: null };

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sip-adapter-'));
  loopback = await startLoopbackAdapter({
    timers: { t1: 100, t2: 800, t4: 200, timerD: 500 },
    rtpPorts: 20,
    recordingDir: dir,
    defaultMedia: () => legMedia,
  });
  ({ stack, adapter } = loopback);
});

afterAll(async () => {
  killSipps();
  await loopback?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Energy of one channel of a stereo 16-bit WAV (0 left/caller, 1 right/assistant). */
function channelRms(file: string, channel: 0 | 1): number {
  const wav = fs.readFileSync(file);
  let sum = 0;
  let n = 0;
  for (let offset = 44 + channel * 2; offset + 2 <= wav.length; offset += 4) {
    const v = wav.readInt16LE(offset);
    sum += v * v;
    n++;
  }
  return n ? Math.sqrt(sum / n) : 0;
}

describe('SIP adapter against SIPp', () => {
  it('answers an inbound PCMA call, speaks, hears DTMF, ends on the caller’s BYE and keeps a stereo recording', async () => {
    const scenario = playPcapScenario(dir);
    const offers: InboundOffer[] = [];
    let leg!: CallLeg;
    const heard = new Promise<string | null>((resolve) => {
      const off = adapter.onInbound(async (offer) => {
        off();
        offers.push(offer);
        leg = await offer.answer();
        const said = leg.say('您好', { interruptible: false });
        const utterance = await leg.listen({ timeoutMs: 5000 });
        await said;
        resolve(utterance?.dtmf ?? null);
      });
    });
    const run = runSipp({
      scenario,
      dir,
      port: await freeUdpPort(),
      mediaPort: await freeMediaPort(),
      remote: `${HOST}:${stack.transport.local.port}`,
    });
    expect(await heard).toBe('1#');
    const result = await run;
    expect(result.code, result.output).toBe(0);
    const end = await leg.whenEnded;
    expect(end.by).toBe('remote');
    expect(offers[0]!.to).toBe('media');
    // The media session closes right after the end; its WAV is then complete.
    const wav = path.join(dir, `${leg.id}.wav`);
    for (let i = 0; i < 100 && adapter.activeLegs > 0; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 100));
    expect(fs.existsSync(wav)).toBe(true);
    expect(channelRms(wav, 0)).toBeGreaterThan(100);
    expect(channelRms(wav, 1)).toBeGreaterThan(100);
  });

  it('calls SIPp answering, then hangs up: BYE from our side, SIPp sees a clean call', async () => {
    const port = await freeUdpPort();
    const run = runSipp({ scenario: 'uas', dir, port, mediaPort: await freeMediaPort() });
    await untilSippListens(port, run);
    let rang = 0;
    const result = await adapter.originate({
      onRinging: () => {
        rang += 1;
      },
      callId: 'out-1',
      from: '02160881000',
      to: '13800000000',
      sip: {
        trunkId: 't1',
        destination: { protocol: 'udp', address: HOST, port },
        domain: HOST,
        callerId: '02160881000',
        callee: '13800000000',
        codecs: ['PCMA', 'PCMU'],
      },
      media: legMedia,
    });
    if (!result.answered) throw new Error(`not answered: ${result.outcome} ${result.detail}`);
    // SIPp's uas sends 180 Ringing before its 200: reported once (a call.ringing webhook).
    expect(rang).toBe(1);
    const played = await result.leg.say('您好', { interruptible: false });
    expect(played.playedMs).toBeGreaterThanOrEqual(560);
    await result.leg.hangup();
    const done = await run;
    expect(done.code, done.output).toBe(0);
  });

  it('reports a busy callee as 忙线 with the carrier’s cause', async () => {
    const port = await freeUdpPort();
    const run = runSipp({ scenario: BUSY_SCENARIO, dir, port });
    await untilSippListens(port, run);
    let rang = false;
    const result = await adapter.originate({
      onRinging: () => {
        rang = true;
      },
      callId: 'out-busy',
      from: '02160881000',
      to: '13800000001',
      sip: {
        trunkId: 't1',
        destination: { protocol: 'udp', address: HOST, port },
        domain: HOST,
        callerId: '02160881000',
        callee: '13800000001',
        codecs: ['PCMA'],
      },
    });
    expect(result).toMatchObject({ answered: false, outcome: 'busy' });
    // Refused at once with 486, no 180: the phone never rang.
    expect(rang).toBe(false);
    if (!result.answered) expect(result.detail).toContain('486');
    expect((await run).code).toBe(0);
  });

  it('gives up ringing after the ring timeout with CANCEL (未接听)', async () => {
    // Nobody listens on this port: no provisional response ever comes, the INVITE times out or
    // is cancelled by the ring timeout, whichever is first; both are unanswered.
    const result = await adapter.originate({
      callId: 'out-nobody',
      from: '02160881000',
      to: '13800000002',
      ringTimeoutMs: 300,
      sip: {
        trunkId: 't1',
        destination: { protocol: 'udp', address: HOST, port: 9 },
        domain: HOST,
        callerId: '02160881000',
        callee: '13800000002',
        codecs: ['PCMA'],
      },
    });
    expect(result.answered).toBe(false);
    if (!result.answered) expect(['no_answer', 'failed']).toContain(result.outcome);
  });

  it('stores numbers in their national form', () => {
    expect(nationalNumber('+8602160881000')).toBe('02160881000');
    expect(nationalNumber('+862160881000')).toBe('02160881000');
    expect(nationalNumber('+8613800000000')).toBe('13800000000');
    expect(nationalNumber('8613800000000')).toBe('13800000000');
    expect(nationalNumber('02160881000')).toBe('02160881000');
  });
});

describe('SIP adapter: media direction of the first offer', () => {
  /** A caller on our own stack whose RTP endpoint is a plain socket, so every packet we send is counted. */
  async function callWith(direction: 'sendonly' | 'sendrecv') {
    const caller = await createSipStack({
      host: HOST,
      port: 0,
      protocols: ['udp'],
      t1: 100,
      t2: 800,
      t4: 200,
    });
    const rtp = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => rtp.bind(0, HOST, () => resolve()));
    let packets = 0;
    rtp.on('message', () => packets++);
    const offer = [
      'v=0',
      `o=- 1 1 IN IP4 ${HOST}`,
      's=-',
      `c=IN IP4 ${HOST}`,
      't=0 0',
      `m=audio ${rtp.address().port} RTP/AVP 8`,
      'a=rtpmap:8 PCMA/8000',
      `a=${direction}`,
      '',
    ].join('\r\n');
    const answered = new Promise<CallLeg>((resolve) => {
      const off = adapter.onInbound(async (offer) => {
        off();
        resolve(await offer.answer());
      });
    });
    const port = stack.transport.local.port;
    const outcome = await caller.agent.invite({
      uri: `sip:02160881000@${HOST}:${port}`,
      from: `<sip:13800000009@${HOST}>`,
      to: `<sip:02160881000@${HOST}:${port}>`,
      destination: { protocol: 'udp', address: HOST, port },
      sdp: offer,
    });
    if (!outcome.answered) throw new Error(`not answered: ${outcome.status}`);
    const leg = await answered;
    const counted = packets;
    const played = await leg.say('您好', { interruptible: false });
    const sent = packets - counted;
    await leg.hangup();
    rtp.close();
    await caller.close();
    return { answer: outcome.session.remoteSdp, sent, played };
  }

  it('answers a sendonly offer recvonly and sends no RTP, though the assistant still speaks its line', async () => {
    const held = await callWith('sendonly');
    expect(held.answer).toContain('a=recvonly');
    expect(held.played.playedMs).toBeGreaterThanOrEqual(560);
    expect(held.sent).toBe(0);
    // The control: the same call sendrecv gets a packet every 20 ms while the line is spoken.
    const open = await callWith('sendrecv');
    expect(open.sent).toBeGreaterThan(20);
  });
});
