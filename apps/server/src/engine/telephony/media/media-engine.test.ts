import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav } from '../../speech/wav';
import { freePortRange, PORT_BANDS } from '../sip/sipp-test-support';
import { DtmfSender, decodeTelephoneEvent } from './dtmf';
import { decodeG711, encodeG711 } from './g711';
import { MediaEngine, type MediaSession, type RemoteMedia } from './media-engine';
import { parseRtp, type RtpPacket, serializeRtp } from './rtp';

/*
 * Loopback tests on real UDP sockets and the real worker thread. Two sessions of one engine talk
 * to each other, or a session talks to a raw socket standing in for a carrier.
 */

const HOST = '127.0.0.1';
/**
 * The timing tests measure wall-clock behaviour on a CI machine that runs other suites at the
 * same time; a retry absorbs a rare stall of the machine, while a real regression (a stop that
 * takes a tick too many, pacing off 20 ms) fails every attempt.
 */
const REAL_TIME = { retry: 2 };
const PORTS = 6;
let engine: MediaEngine;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'media-engine-'));
  // Probed, in the band kept for RTP: a range drawn blindly could hold a port another test file
  // (or the kernel, for an ephemeral port) has bound, and the pool would run out one port early.
  const base = await freePortRange(2 * PORTS, { band: PORT_BANDS.rtp });
  engine = await MediaEngine.start({ rtpPortMin: base, rtpPortMax: base + 2 * PORTS - 1, bindAddress: HOST });
});

afterAll(async () => {
  await engine?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const tone = (frequency: number, ms: number, amplitude = 8000) =>
  Int16Array.from({ length: ms * 8 }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / 8000)),
  );

const rms = (pcm: Int16Array) =>
  pcm.length ? Math.sqrt(pcm.reduce((s, v) => s + v * v, 0) / pcm.length) : 0;

/** Frequency from the zero crossings of a stretch of tone. */
function frequencyOf(pcm: Int16Array): number {
  let crossings = 0;
  for (let i = 1; i < pcm.length; i++) if ((pcm[i - 1] as number) < 0 !== (pcm[i] as number) < 0) crossings++;
  return (crossings / 2) * (8000 / pcm.length);
}

/** 20 ms frames that carry sound, of a stream of samples. */
function voicedFrames(pcm: Int16Array): number[] {
  const voiced: number[] = [];
  for (let f = 0; f * 160 < pcm.length; f++)
    if (rms(pcm.subarray(f * 160, f * 160 + 160)) > 1000) voiced.push(f);
  return voiced;
}

const remoteFor = (port: number, extra: Partial<RemoteMedia> = {}): RemoteMedia => ({
  address: HOST,
  port,
  codec: 'PCMA',
  payloadType: 8,
  telephoneEventPt: 101,
  ptime: 20,
  ...extra,
});

async function pair(): Promise<[MediaSession, MediaSession]> {
  const a = await engine.open({ callId: 'call-a' });
  const b = await engine.open({ callId: 'call-b' });
  await a.setRemote(remoteFor(b.localPort));
  await b.setRemote(remoteFor(a.localPort));
  return [a, b];
}

interface Received {
  at: number;
  packet: RtpPacket;
  port: number;
}

/** A raw UDP socket in place of the far end: records what arrives, can send RTP. */
async function rawPeer() {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, HOST, () => resolve()));
  const received: Received[] = [];
  socket.on('message', (datagram, rinfo) => {
    const parsed = parseRtp(datagram);
    if (parsed.ok) received.push({ at: performance.now(), packet: parsed.packet, port: rinfo.port });
  });
  let seq = 1000;
  return {
    port: socket.address().port,
    received,
    send(toPort: number, payload = encodeG711('PCMA', tone(300, 20)), payloadType = 8) {
      socket.send(
        serializeRtp({ payloadType, sequenceNumber: seq, timestamp: seq * 160, ssrc: 4242, payload }),
        toPort,
        HOST,
      );
      seq++;
    },
    close: () => socket.close(),
  };
}

describe('MediaEngine on loopback', () => {
  it('carries a played 1 kHz tone to the other session, which hears it at the right pitch and length', async () => {
    const [a, b] = await pair();
    const heard: Int16Array[] = [];
    b.on('audio', (pcm) => heard.push(pcm));
    await b.setForwardAudio(true);
    const outcome = await a.play(tone(1000, 400));
    expect(outcome).toEqual({ playedMs: 400, interrupted: false });
    await sleep(150);
    const pcm = Int16Array.from(heard.flatMap((chunk) => [...chunk]));
    // Forwarded in batches of 80 ms.
    expect(heard.every((chunk) => chunk.length === 640)).toBe(true);
    const voiced = voicedFrames(pcm);
    expect(voiced.length).toBeGreaterThanOrEqual(19);
    expect(voiced.length).toBeLessThanOrEqual(21);
    // One unbroken stretch: no frame of the tone was lost or reordered.
    expect((voiced.at(-1) as number) - (voiced[0] as number) + 1).toBe(voiced.length);
    const middle = pcm.subarray(((voiced[0] as number) + 2) * 160, ((voiced.at(-1) as number) - 1) * 160);
    expect(frequencyOf(middle)).toBeGreaterThan(980);
    expect(frequencyOf(middle)).toBeLessThan(1020);
    expect(rms(middle)).toBeGreaterThan(5000);
    const [resultA, resultB] = await Promise.all([a.close(), b.close()]);
    expect(resultB.stats.lost).toBe(0);
    expect(resultB.stats.received).toBeGreaterThan(20);
    expect(resultA.stats.sent).toBeGreaterThan(20);
  });

  it('delivers DTMF "1#" sent by one session as exactly two digits at the other', async () => {
    const [a, b] = await pair();
    const digits: string[] = [];
    b.on('dtmf', (digit) => digits.push(digit));
    await a.sendDtmf('1#');
    await sleep(60);
    expect(digits).toEqual(['1', '#']);
    await expect(a.sendDtmf('1x')).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    await Promise.all([a.close(), b.close()]);
  });

  it('stops playback within 40 ms of stopPlayback and reports how much was played', REAL_TIME, async () => {
    const peer = await rawPeer();
    const session = await engine.open({ callId: 'barge-in' });
    await session.setRemote(remoteFor(peer.port));
    const playing = session.play(tone(1000, 3000));
    const queued = session.play(tone(500, 1000));
    await sleep(300);
    const stopAt = performance.now();
    await session.stopPlayback();
    const outcome = await playing;
    const resolvedAt = performance.now();
    expect(outcome.interrupted).toBe(true);
    expect(Math.abs(outcome.playedMs - 300)).toBeLessThanOrEqual(60);
    expect(resolvedAt - stopAt).toBeLessThan(40);
    expect(await queued).toEqual({ playedMs: 0, interrupted: true });
    await sleep(100);
    const toneArrivals = peer.received.filter((r) => rms(decodeG711('PCMA', r.packet.payload)) > 1000);
    expect((toneArrivals.at(-1) as Received).at - stopAt).toBeLessThanOrEqual(40);
    // What the far end heard is what the outcome reports.
    expect(Math.abs(toneArrivals.length * 20 - outcome.playedMs)).toBeLessThanOrEqual(20);
    // The talk spurt started with the marker bit, and silence kept flowing after the stop.
    expect(toneArrivals[0]?.packet.marker).toBe(true);
    expect(peer.received.filter((r) => r.at > stopAt + 40).length).toBeGreaterThanOrEqual(3);
    await session.close();
    peer.close();
  });

  it('sends one packet every 20 ms, silence when there is nothing to play', REAL_TIME, async () => {
    const peer = await rawPeer();
    const session = await engine.open({ callId: 'pacing' });
    await session.setRemote(remoteFor(peer.port, { codec: 'PCMU', payloadType: 0 }));
    await sleep(600);
    await session.close();
    peer.close();
    const packets = peer.received;
    expect(packets.length).toBeGreaterThanOrEqual(27);
    expect(
      packets.every((r) => r.packet.payloadType === 0 && r.packet.payload.every((b) => b === 0xff)),
    ).toBe(true);
    for (let i = 1; i < packets.length; i++) {
      const previous = (packets[i - 1] as Received).packet;
      expect(packets[i]?.packet.sequenceNumber).toBe((previous.sequenceNumber + 1) & 0xffff);
      expect(packets[i]?.packet.timestamp).toBe((previous.timestamp + 160) >>> 0);
    }
    const gaps = packets.slice(1).map((r, i) => r.at - (packets[i] as Received).at);
    const mean = gaps.reduce((s, g) => s + g, 0) / gaps.length;
    const meanDeviation = gaps.reduce((s, g) => s + Math.abs(g - 20), 0) / gaps.length;
    expect(mean).toBeGreaterThan(19);
    expect(mean).toBeLessThan(21);
    expect(meanDeviation).toBeLessThan(5);
  });

  it('latches onto the port the far end really sends from, and ignores other sources afterwards', async () => {
    const sdpPeer = await rawPeer();
    const natPeer = await rawPeer();
    const stranger = await rawPeer();
    const session = await engine.open({ callId: 'nat' });
    const latched: Array<{ port: number; sdpPort: number }> = [];
    session.on('latched', (info) => latched.push(info));
    await session.setRemote(remoteFor(sdpPeer.port));
    await sleep(60);
    expect(sdpPeer.received.length).toBeGreaterThan(0);
    natPeer.send(session.localPort);
    await sleep(30);
    stranger.send(session.localPort);
    const sdpCount = sdpPeer.received.length;
    await sleep(100);
    expect(latched).toEqual([expect.objectContaining({ port: natPeer.port, sdpPort: sdpPeer.port })]);
    expect(natPeer.received.length).toBeGreaterThanOrEqual(4);
    expect(sdpPeer.received.length).toBe(sdpCount);
    expect(stranger.received).toHaveLength(0);
    const result = await session.close();
    expect(result.stats.foreign).toBe(1);
    for (const peer of [sdpPeer, natPeer, stranger]) peer.close();
  });

  it('reports a silent far end as inactive, but not while the call is on hold', REAL_TIME, async () => {
    const peer = await rawPeer();
    const silent = await engine.open({ callId: 'silent', inactivityTimeoutMs: 200 });
    const held = await engine.open({ callId: 'held', inactivityTimeoutMs: 200 });
    const events: string[] = [];
    silent.on('inactive', ({ silentMs }) => events.push(`silent ${silentMs >= 200}`));
    held.on('inactive', () => events.push('held'));
    const openedAt = performance.now();
    await silent.setRemote(remoteFor(peer.port));
    await held.setRemote(remoteFor(peer.port));
    await held.setDirection('sendonly');
    while (events.length === 0 && performance.now() - openedAt < 1000) await sleep(10);
    const firedAfter = performance.now() - openedAt;
    await sleep(250);
    expect(events).toEqual(['silent true']);
    expect(firedAfter).toBeGreaterThanOrEqual(200);
    expect(firedAfter).toBeLessThan(300);
    await Promise.all([silent.close(), held.close()]);
    peer.close();
  });

  it('records both sides into a stereo WAV as long as the call', REAL_TIME, async () => {
    const file = path.join(dir, 'project-1', 'call-rec.wav');
    const a = await engine.open({ callId: 'caller' });
    const b = await engine.open({ callId: 'assistant', recordingPath: file });
    await a.setRemote(remoteFor(b.localPort));
    // The recording runs from when the worker took setRemote to when it took close; the main
    // thread only knows each within the round trip of its message, so that is the tolerance
    // on top of 40 ms (two ticks).
    const beforeStart = performance.now();
    await b.setRemote(remoteFor(a.localPort));
    const afterStart = performance.now();
    await Promise.all([a.play(tone(1000, 300)), b.play(tone(500, 200))]);
    await sleep(100);
    const beforeClose = performance.now();
    const result = await b.close();
    const afterClose = performance.now();
    await a.close();

    expect(result.recordingPath).toBe(file);
    const wav = fs.readFileSync(file);
    const info = readWav(wav);
    expect(info).toMatchObject({ channels: 2, sampleRate: 8000, bitsPerSample: 16 });
    expect(info.durationMs).toBeGreaterThanOrEqual(beforeClose - afterStart - 40);
    expect(info.durationMs).toBeLessThanOrEqual(afterClose - beforeStart + 40);
    expect(Math.abs(result.durationMs - info.durationMs)).toBeLessThanOrEqual(20);
    const frames = info.dataBytes / 4;
    const side = (s: 0 | 1) =>
      Int16Array.from({ length: frames }, (_, i) => wav.readInt16LE(44 + (i * 2 + s) * 2));
    const left = side(0);
    const right = side(1);
    const leftVoiced = voicedFrames(left);
    const rightVoiced = voicedFrames(right);
    expect(leftVoiced.length).toBeGreaterThanOrEqual(14);
    expect(leftVoiced.length).toBeLessThanOrEqual(16);
    expect(rightVoiced).toHaveLength(10);
    expect(
      frequencyOf(left.subarray((leftVoiced[2] as number) * 160, (leftVoiced[12] as number) * 160)),
    ).toBeCloseTo(1000, -2);
    expect(
      frequencyOf(right.subarray((rightVoiced[1] as number) * 160, (rightVoiced[8] as number) * 160)),
    ).toBeCloseTo(500, -2);
    // The caller's tone reaches the recording after the jitter buffer's cushion, never before it was sent.
    expect(leftVoiced[0]).toBeGreaterThanOrEqual(rightVoiced[0] as number);
  });

  it('opens a session without waiting for its recording, and says at close why the recording is missing', async () => {
    // A directory where the file should be: the disk refuses, the call goes on.
    const session = await engine.open({ callId: 'no-recording', recordingPath: dir });
    const raw = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => raw.bind(0, HOST, () => resolve()));
    const packets: Buffer[] = [];
    raw.on('message', (datagram) => packets.push(datagram));
    await session.setRemote(remoteFor(raw.address().port));
    await sleep(200);
    const result = await session.close();
    raw.close();
    expect(packets.length).toBeGreaterThan(3);
    expect(result.recordingPath).toBeNull();
    expect(result.recordingError).toMatch(/cannot write the recording/);
  });

  it('bridges two calls: the tone one caller sends reaches the other in its own codec, keys cross, the first recording is already final', async () => {
    const caller = await rawPeer();
    const human = await rawPeer();
    const file = path.join(dir, 'bridged-first.wav');
    const first = await engine.open({ callId: 'bridged-first', recordingPath: file });
    const second = await engine.open({ callId: 'bridged-second' });
    await first.setRemote(remoteFor(caller.port));
    await second.setRemote(remoteFor(human.port, { codec: 'PCMU', payloadType: 0 }));
    const audio: Int16Array[] = [];
    first.on('audio', (pcm) => audio.push(pcm));
    await first.setForwardAudio(true);
    const unfinished = first.play(tone(700, 2000));
    await sleep(100);
    const stopped = await first.stopRecording();
    expect(stopped).toEqual({ recordingPath: file });
    const header = fs.readFileSync(file);
    // Finalised: the header's data length is patched in (the recording worker waits for it).
    expect(header.readUInt32LE(40)).toBeGreaterThan(0);
    expect(header.readUInt32LE(40)).toBe(header.length - 44);
    const wav = readWav(header);
    await engine.bridge(first, second);
    expect((await unfinished).interrupted).toBe(true);
    const bridgedAt = performance.now();
    for (let i = 0; i < 25; i++) {
      caller.send(first.localPort, encodeG711('PCMA', tone(1000, 20)));
      await sleep(20);
    }
    await sleep(150);
    const toHuman = human.received.filter((r) => r.at > bridgedAt && r.packet.payloadType === 0);
    const heard = Int16Array.from(toHuman.flatMap((r) => [...decodeG711('PCMU', r.packet.payload)]));
    expect(voicedFrames(heard).length).toBeGreaterThanOrEqual(20);
    const voiced = voicedFrames(heard);
    const middle = heard.subarray(((voiced[2] as number) + 0) * 160, (voiced.at(-3) as number) * 160);
    expect(frequencyOf(middle)).toBeCloseTo(1000, -2);
    // The assistant no longer hears the caller.
    const forwardedAfter = audio.length;
    await sleep(100);
    expect(audio.length).toBe(forwardedAfter);
    // A key the human presses goes on to the caller as telephone events.
    const sender = new DtmfSender();
    sender.enqueue('5');
    for (let packet = sender.next(8000); packet; packet = sender.next(8000)) {
      human.send(second.localPort, packet.payload, 101);
      await sleep(20);
    }
    await sleep(100);
    const events = caller.received
      .filter((r) => r.packet.payloadType === 101)
      .map((r) => decodeTelephoneEvent(r.packet.payload)?.event);
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(events)).toEqual(new Set([5]));
    const [firstResult] = await Promise.all([first.close(), second.close()]);
    expect(firstResult.recordingPath).toBe(file);
    // Nothing of the bridged conversation was appended after stopRecording.
    expect(readWav(fs.readFileSync(file)).dataBytes).toBe(wav.dataBytes);
    caller.close();
    human.close();
  });

  it('runs out of ports with a clear error and reuses a released one', async () => {
    const sessions = await Promise.all(
      Array.from({ length: PORTS }, (_, i) => engine.open({ callId: `fill-${i}` })),
    );
    expect(new Set(sessions.map((s) => s.localPort)).size).toBe(PORTS);
    expect(sessions.every((s) => s.localPort % 2 === 0)).toBe(true);
    await expect(engine.open({ callId: 'one-too-many' })).rejects.toMatchObject({
      code: 'RTP_PORTS_EXHAUSTED',
    });
    expect((await engine.stats()).portsInUse).toBe(PORTS);
    const freed = sessions.pop() as MediaSession;
    await freed.close();
    const again = await engine.open({ callId: 'after-release' });
    expect(again.localPort).toBe(freed.localPort);
    await Promise.all([...sessions, again].map((s) => s.close()));
    const stats = await engine.stats();
    expect(stats).toMatchObject({ sessions: 0, portsInUse: 0, portCapacity: PORTS });
    expect(stats.ticks).toBeGreaterThan(100);
    expect(stats.latenessMaxMs).toBeGreaterThanOrEqual(stats.latenessP99Ms);
    expect(stats.packetsSent).toBeGreaterThan(100);
    expect(stats.eventLoopUtilization).toBeGreaterThan(0);
    expect(stats.eventLoopUtilization).toBeLessThan(1);
    if (process.platform === 'linux') {
      // The worker's own share, which the bench's one-core budget reads: part of the process's.
      expect(stats.workerCpuMs).toBeGreaterThan(0);
      expect(stats.workerCpuMs).toBeLessThanOrEqual(stats.processCpuUserMs + stats.processCpuSystemMs + 1);
      expect(stats.workerWaitMs).toBeGreaterThanOrEqual(0);
    }
  });
});
