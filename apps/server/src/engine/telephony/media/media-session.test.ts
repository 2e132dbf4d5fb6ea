import { describe, expect, it } from 'vitest';
import { DtmfSender, decodeTelephoneEvent } from './dtmf';
import { decodeG711, encodeG711 } from './g711';
import { type FrameRecorder, RtpSession } from './media-session';
import type { PlayOutcome, RemoteMedia, SessionEvent } from './protocol';
import { parseRtp, type RtpPacket, serializeRtp } from './rtp';

/*
 * The session's tick and receive logic with the sockets and the clock taken out: every tick is
 * called by hand with its time, every sent datagram is captured.
 */

const REMOTE: RemoteMedia = {
  address: '192.0.2.10',
  port: 40000,
  codec: 'PCMA',
  payloadType: 8,
  telephoneEventPt: 96,
  ptime: 20,
};

function harness(options: { inactivityTimeoutMs?: number; recorder?: FrameRecorder } = {}) {
  const sent: Array<{ packet: RtpPacket; port: number; address: string }> = [];
  const events: SessionEvent[] = [];
  const transfers: ArrayBuffer[][] = [];
  const session = new RtpSession(
    { callId: 'c1', inactivityTimeoutMs: options.inactivityTimeoutMs ?? 1000, recorder: options.recorder },
    (datagram, port, address) => {
      const parsed = parseRtp(datagram);
      if (!parsed.ok) throw new Error(parsed.reason);
      sent.push({ packet: parsed.packet, port, address });
    },
    (event, transfer) => {
      events.push(event);
      if (transfer) transfers.push(transfer);
    },
  );
  let now = 0;
  const tick = (count = 1) => {
    for (let i = 0; i < count; i++) {
      now += 20;
      session.tick(now, false);
    }
  };
  let farSeq = 500;
  const farEnd = (
    overrides: { payloadType?: number; payload?: Uint8Array; ssrc?: number; timestamp?: number } = {},
    from = { address: REMOTE.address, port: REMOTE.port },
  ) => {
    const datagram = serializeRtp({
      payloadType: overrides.payloadType ?? 8,
      sequenceNumber: farSeq,
      timestamp: overrides.timestamp ?? farSeq * 160,
      ssrc: overrides.ssrc ?? 77,
      payload: overrides.payload ?? encodeG711('PCMA', frameOf(3000)),
    });
    farSeq++;
    session.receive(datagram, from.address, from.port, now);
  };
  return { session, sent, events, transfers, tick, farEnd, now: () => now };
}

const frameOf = (value: number, samples = 160) => new Int16Array(samples).fill(value);

const outcomes = () => {
  const list: PlayOutcome[] = [];
  return { list, done: (outcome: PlayOutcome) => list.push(outcome) };
};

describe('RtpSession sending', () => {
  it('sends nothing before the far end is known, then one packet per tick, silence by default', () => {
    const { session, sent, tick } = harness();
    tick(3);
    expect(sent).toHaveLength(0);
    session.setRemote(REMOTE, 60);
    tick(5);
    expect(sent).toHaveLength(5);
    expect(sent.every((s) => s.address === REMOTE.address && s.port === REMOTE.port)).toBe(true);
    expect(sent.every((s) => s.packet.payloadType === 8 && s.packet.payload.every((b) => b === 0xd5))).toBe(
      true,
    );
    expect(new Set(sent.map((s) => s.packet.ssrc)).size).toBe(1);
    sent.slice(1).forEach((s, i) => {
      const previous = (sent[i] as (typeof sent)[number]).packet;
      expect(s.packet.sequenceNumber).toBe((previous.sequenceNumber + 1) & 0xffff);
      expect(s.packet.timestamp).toBe((previous.timestamp + 160) >>> 0);
    });
    expect(sent.some((s) => s.packet.marker)).toBe(false);
  });

  it('plays queued speech frame by frame, marking the start of each talk spurt', () => {
    const { session, sent, tick } = harness();
    session.setRemote(REMOTE, 0);
    const first = outcomes();
    session.play(frameOf(4000, 400), first.done);
    session.play(frameOf(-4000, 160), first.done);
    tick(6);
    const levels = sent.map((s) => decodeG711('PCMA', s.packet.payload)[0]);
    expect(levels.map((v) => Math.sign(v as number))).toEqual([1, 1, 1, -1, 1, 1]);
    // The third frame is half speech, half padding.
    expect(decodeG711('PCMA', (sent[2] as (typeof sent)[number]).packet.payload)[100]).toBe(8);
    expect(sent.map((s) => s.packet.marker)).toEqual([true, false, false, false, false, false]);
    expect(first.list).toEqual([
      { playedMs: 50, interrupted: false },
      { playedMs: 20, interrupted: false },
    ]);
    session.play(frameOf(4000, 160), () => {});
    tick(1);
    expect(sent.at(-1)?.packet.marker).toBe(true);
    const empty = outcomes();
    session.play(new Int16Array(0), empty.done);
    expect(empty.list).toEqual([{ playedMs: 0, interrupted: false }]);
  });

  it('stops at once on stopPlayback, reporting what was played and dropping the queue', () => {
    const { session, sent, tick } = harness();
    session.setRemote(REMOTE, 0);
    const played = outcomes();
    session.play(frameOf(4000, 8000), played.done);
    session.play(frameOf(4000, 800), played.done);
    tick(7);
    session.stopPlayback();
    tick(1);
    expect(played.list).toEqual([
      { playedMs: 140, interrupted: true },
      { playedMs: 0, interrupted: true },
    ]);
    expect(sent.at(-1)?.packet.payload.every((b) => b === 0xd5)).toBe(true);
  });

  it('on hold sends nothing and plays on muted, while RTP time keeps running', () => {
    const { session, sent, tick } = harness();
    session.setRemote(REMOTE, 0);
    const played = outcomes();
    session.play(frameOf(4000, 480), played.done);
    tick(1);
    session.setDirection('recvonly', 20);
    tick(10);
    expect(sent).toHaveLength(1);
    // Like a media server's prompt: the line runs out at real time, unheard, rather than waiting
    // for a far end that may never take us off hold.
    expect(played.list).toEqual([{ playedMs: 60, interrupted: false }]);
    session.setDirection('sendrecv', 220);
    tick(2);
    expect(sent).toHaveLength(3);
    const before = sent[0]?.packet as RtpPacket;
    const after = sent[1]?.packet as RtpPacket;
    expect(after.sequenceNumber).toBe((before.sequenceNumber + 1) & 0xffff);
    expect(after.timestamp).toBe((before.timestamp + 11 * 160) >>> 0);
    expect(after.payload.every((b) => b === 0xd5)).toBe(true);
  });

  it('sends DTMF as telephone events in place of audio, then resumes the speech', () => {
    const { session, sent, tick } = harness();
    session.setRemote(REMOTE, 0);
    let dtmfDone = false;
    session.play(frameOf(4000, 1600), () => {});
    tick(2);
    session.sendDtmf('5', () => {
      dtmfDone = true;
    });
    tick(9);
    const kinds = sent.map((s) => s.packet.payloadType);
    expect(kinds).toEqual([8, 8, 96, 96, 96, 96, 96, 96, 96, 8, 8]);
    const events = sent.filter((s) => s.packet.payloadType === 96);
    expect(new Set(events.map((s) => s.packet.timestamp))).toEqual(new Set([sent[2]?.packet.timestamp]));
    expect(events.map((s) => decodeTelephoneEvent(s.packet.payload)?.event)).toEqual([5, 5, 5, 5, 5, 5, 5]);
    expect(dtmfDone).toBe(true);
    // Speech picks up where it left off: a new talk spurt.
    expect(sent[9]?.packet.marker).toBe(true);
    expect(sent[9]?.packet.timestamp).toBe(((sent[1]?.packet.timestamp as number) + 8 * 160) >>> 0);
  });

  it('refuses DTMF when the far end negotiated no telephone-event, and bad remote media', () => {
    const { session } = harness();
    session.setRemote({ ...REMOTE, telephoneEventPt: null }, 0);
    expect(() => session.sendDtmf('1', () => {})).toThrow(/telephone-event/);
    expect(() => session.setRemote({ ...REMOTE, codec: 'G729' as 'PCMA' }, 0)).toThrow(
      /invalid remote media/,
    );
    expect(() => session.setRemote({ ...REMOTE, port: 70000 }, 0)).toThrow(/invalid remote media/);
    expect(() => session.setDirection('hold' as 'inactive', 0)).toThrow(/invalid direction/);
  });
});

describe('RtpSession receiving', () => {
  it('decodes the caller through the jitter buffer and records both sides tick by tick', () => {
    const frames: Array<[number | null, number | null]> = [];
    const recorder: FrameRecorder = {
      writeFrame: (left, right) =>
        frames.push([left ? (left[0] as number) : null, right ? (right[0] as number) : null]),
      close: async () => ({ path: '/tmp/x.wav' }),
    };
    const { session, tick, farEnd } = harness({ recorder });
    session.setRemote(REMOTE, 0);
    session.play(frameOf(-2000, 320), () => {});
    for (let i = 0; i < 3; i++) farEnd();
    tick(4);
    expect(frames).toHaveLength(4);
    expect(frames.map(([left]) => left && Math.round(left / 100))).toEqual([30, 30, 30, null]);
    expect(frames.map(([, right]) => right && Math.round(right / 100))).toEqual([-20, -20, null, null]);
  });

  it('plays 30 ms packets out as 20 ms frames, in order and without gaps', () => {
    const left: Int16Array[] = [];
    const recorder: FrameRecorder = {
      writeFrame: (caller) => left.push(caller ?? new Int16Array(160)),
      close: async () => ({ path: '/tmp/x.wav' }),
    };
    const { session, tick, farEnd } = harness({ recorder });
    session.setRemote(REMOTE, 0);
    // A far end that ignores a=ptime:20: a 240-sample packet every 30 ms, each at its own level.
    const levels = Array.from({ length: 20 }, (_, i) => 1000 + 500 * i);
    for (let ms = 0; ms < 900; ms += 10) {
      if (ms % 30 === 0 && ms / 30 < levels.length) {
        farEnd({ payload: encodeG711('PCMA', frameOf(levels[ms / 30] as number, 240)) });
      }
      if (ms % 20 === 10) tick(1);
    }
    const heard = Int16Array.from(left.flatMap((frame) => [...frame]));
    const start = heard.findIndex((v) => v !== 0 && v !== 8);
    const runs: Array<[number, number]> = [];
    for (let i = start; i < heard.length; i++) {
      const last = runs.at(-1);
      if (last && Math.abs((heard[i] as number) - last[0]) < 100) last[1]++;
      else runs.push([heard[i] as number, 1]);
    }
    const speech = runs.filter(([level]) => Math.abs(level) > 500);
    expect(speech).toHaveLength(levels.length);
    expect(speech.map(([, length]) => length)).toEqual(levels.map(() => 240));
    speech.forEach(([level], i) => {
      expect(Math.abs(level - (levels[i] as number))).toBeLessThan(100);
    });
    expect(session.stats.lost).toBe(0);
  });

  it('reports one digit per press and drops packets of types the SDP did not agree', () => {
    const { session, events, tick, farEnd } = harness();
    session.setRemote(REMOTE, 0);
    const sender = new DtmfSender();
    sender.enqueue('9');
    for (let i = 0; i < 8; i++) {
      const packet = sender.next(1000);
      if (packet) farEnd({ payloadType: 96, payload: packet.payload, timestamp: packet.timestamp });
    }
    farEnd({ payloadType: 18 });
    session.receive(Buffer.from('not rtp at all'), REMOTE.address, REMOTE.port, 0);
    tick(1);
    expect(events.filter((e) => e.type === 'dtmf')).toEqual([{ type: 'dtmf', digit: '9' }]);
    expect(session.stats).toMatchObject({ dtmfReceived: 1, discarded: 2, lost: 0 });
  });

  it('takes DTMF in the numbering of our SDP when the answer numbered telephone-event differently', () => {
    const { session, sent, events, tick, farEnd } = harness();
    session.setRemote({ ...REMOTE, telephoneEventPt: 96, receiveTelephoneEventPt: 101, ptime: 30 }, 0);
    const sender = new DtmfSender();
    sender.enqueue('4');
    for (let i = 0; i < 8; i++) {
      const packet = sender.next(3200);
      if (packet) farEnd({ payloadType: 101, payload: packet.payload, timestamp: packet.timestamp });
    }
    expect(events.filter((e) => e.type === 'dtmf')).toEqual([{ type: 'dtmf', digit: '4' }]);
    session.sendDtmf('4', () => {});
    tick(1);
    expect(sent.at(-1)?.packet.payloadType).toBe(96);
  });

  it('latches to the source of the first packets, keeps it across a refresh, relearns it for a new endpoint', () => {
    const { session, sent, events, tick, farEnd } = harness();
    session.setRemote(REMOTE, 0);
    tick(1);
    expect(sent.at(-1)?.address).toBe(REMOTE.address);
    farEnd({}, { address: '203.0.113.5', port: 31000 });
    tick(1);
    expect(sent.at(-1)).toMatchObject({ address: '203.0.113.5', port: 31000 });
    expect(events).toEqual([
      {
        type: 'latched',
        address: '203.0.113.5',
        port: 31000,
        sdpAddress: REMOTE.address,
        sdpPort: REMOTE.port,
      },
    ]);
    farEnd({}, { address: '198.51.100.66', port: 5000 });
    expect(session.stats.foreign).toBe(1);

    session.setRemote({ ...REMOTE, codec: 'PCMU', payloadType: 0 }, 40);
    tick(1);
    expect(sent.at(-1)).toMatchObject({ address: '203.0.113.5', port: 31000 });
    expect(sent.at(-1)?.packet.payloadType).toBe(0);

    session.setRemote({ ...REMOTE, address: '192.0.2.99', port: 41000 }, 60);
    tick(1);
    expect(sent.at(-1)).toMatchObject({ address: '192.0.2.99', port: 41000 });
  });

  it('ignores what arrives while it is not receiving', () => {
    const { session, events, farEnd } = harness();
    session.setRemote(REMOTE, 0);
    session.setDirection('sendonly', 0);
    farEnd();
    expect(events).toEqual([]);
    expect(session.stats.received).toBe(0);
  });

  it('reports inactivity once per silence, only while sendrecv', () => {
    const { session, events, tick, farEnd } = harness({ inactivityTimeoutMs: 200 });
    const inactive = () => events.filter((e) => e.type === 'inactive');
    session.setRemote(REMOTE, 0);
    tick(9);
    expect(inactive()).toEqual([]);
    tick(1);
    expect(inactive()).toEqual([{ type: 'inactive', silentMs: 200 }]);
    tick(20);
    expect(inactive()).toHaveLength(1);
    farEnd();
    tick(10);
    expect(inactive()).toEqual([
      { type: 'inactive', silentMs: 200 },
      { type: 'inactive', silentMs: 200 },
    ]);
    session.setDirection('inactive', 800);
    tick(50);
    expect(inactive()).toHaveLength(2);
  });

  it('forwards caller audio in batches of 80 ms only while asked, handing the buffer over', () => {
    const { session, events, transfers, tick, farEnd } = harness();
    session.setRemote(REMOTE, 0);
    tick(4);
    expect(events).toEqual([]);
    session.setForwardAudio(true);
    for (let i = 0; i < 6; i++) farEnd();
    tick(6);
    const audio = events.filter((e) => e.type === 'audio');
    expect(audio).toHaveLength(1);
    const pcm = (audio[0] as { pcm: Int16Array }).pcm;
    expect(pcm.length).toBe(640);
    expect(transfers[0]?.[0]).toBe(pcm.buffer);
    session.setForwardAudio(false);
    tick(8);
    expect(events.filter((e) => e.type === 'audio')).toHaveLength(1);
  });
});

describe('RtpSession close', () => {
  it('settles pending playback and digits, and reports media time and counters', async () => {
    const { session, tick, farEnd } = harness();
    session.setRemote(REMOTE, 0);
    const played = outcomes();
    session.play(frameOf(1000, 8000), played.done);
    let digitsSettled = false;
    session.sendDtmf('123', () => {
      digitsSettled = true;
    });
    farEnd();
    tick(25);
    const result = await session.close();
    // Speech went out only in the gaps between the keys: 2 × 3 ticks.
    expect(played.list).toEqual([{ playedMs: 120, interrupted: true }]);
    expect(digitsSettled).toBe(true);
    expect(result).toMatchObject({ recordingPath: null, durationMs: 500 });
    expect(result.stats).toMatchObject({ sent: 25, received: 1 });
    await expect(session.close()).rejects.toMatchObject({ code: 'NO_SUCH_SESSION' });
  });
});

describe('RtpSession bridge', () => {
  const PCMU_REMOTE: RemoteMedia = { ...REMOTE, address: '192.0.2.20', codec: 'PCMU', payloadType: 0 };

  /** Two sessions as the worker steps them: both tick in the same 20 ms turn. */
  function bridgedPair(options: { bRemote?: RemoteMedia } = {}) {
    const a = harness();
    const b = harness();
    a.session.setRemote(REMOTE, 0);
    b.session.setRemote(options.bRemote ?? PCMU_REMOTE, 0);
    const tickBoth = (count = 1) => {
      for (let i = 0; i < count; i++) {
        a.tick();
        b.tick();
      }
    };
    return { a, b, tickBoth };
  }

  it('sends each side what the other hears, PCMA in and PCMU out, and stops forwarding it to the assistant', () => {
    const { a, b, tickBoth } = bridgedPair();
    a.session.setForwardAudio(true);
    a.session.bridge(b.session);
    // One packet a tick, as a phone sends them.
    for (let i = 0; i < 10; i++) {
      a.farEnd({ payload: encodeG711('PCMA', frameOf(3000)) });
      tickBoth();
    }
    tickBoth(6);
    const toB = b.sent.filter((s) => s.packet.payloadType === 0);
    const levels = toB.map((s) => decodeG711('PCMU', s.packet.payload)[0] as number);
    // The caller's ten frames arrive at the other side, near 3000 through both codecs, in order.
    expect(levels.filter((v) => Math.abs(v - 3000) < 150)).toHaveLength(10);
    expect(b.sent.every((s) => s.address === PCMU_REMOTE.address)).toBe(true);
    // The first voiced packet starts a talk spurt.
    expect(
      toB.find((s) => Math.abs((decodeG711('PCMU', s.packet.payload)[0] as number) - 3000) < 150)?.packet
        .marker,
    ).toBe(true);
    expect(a.events.filter((e) => e.type === 'audio')).toEqual([]);
    // And the other way: what B hears goes to A's far end.
    for (let i = 0; i < 5; i++) {
      b.farEnd({ payloadType: 0, payload: encodeG711('PCMU', frameOf(-1500)) });
      tickBoth();
    }
    tickBoth(6);
    const toA = a.sent.slice(-11).map((s) => decodeG711('PCMA', s.packet.payload)[0] as number);
    expect(toA.filter((v) => Math.abs(v + 1500) < 100)).toHaveLength(5);
  });

  it('drops the speech still queued on either side, and plays nothing new while bridged', () => {
    const { a, b, tickBoth } = bridgedPair();
    const queuedA = outcomes();
    const queuedB = outcomes();
    a.session.play(frameOf(2000, 1600), queuedA.done);
    b.session.play(frameOf(2000, 1600), queuedB.done);
    tickBoth(2);
    a.session.bridge(b.session);
    expect(queuedA.list).toEqual([{ playedMs: 40, interrupted: true }]);
    expect(queuedB.list).toEqual([{ playedMs: 40, interrupted: true }]);
    const late = outcomes();
    a.session.play(frameOf(2000, 1600), late.done);
    expect(late.list).toEqual([{ playedMs: 0, interrupted: true }]);
    tickBoth(5);
    // Nobody spoke on either far end: both sides send silence.
    expect(a.sent.slice(-5).every((s) => s.packet.payload.every((byte) => byte === 0xd5))).toBe(true);
    expect(b.sent.slice(-5).every((s) => s.packet.payload.every((byte) => byte === 0xff))).toBe(true);
  });

  it('sends a key pressed on one side on to the other as telephone events, not to the assistant', () => {
    const { a, b, tickBoth } = bridgedPair();
    a.session.bridge(b.session);
    const sender = new DtmfSender();
    sender.enqueue('7');
    for (let i = 0; i < 8; i++) {
      const packet = sender.next(3200);
      if (packet) a.farEnd({ payloadType: 96, payload: packet.payload, timestamp: packet.timestamp });
    }
    tickBoth(10);
    const events = b.sent
      .filter((s) => s.packet.payloadType === 96)
      .map((s) => decodeTelephoneEvent(s.packet.payload));
    expect(events.length).toBeGreaterThan(3);
    expect(new Set(events.map((e) => e?.event))).toEqual(new Set([7]));
    expect(events.at(-1)?.end).toBe(true);
    expect(a.events.filter((e) => e.type === 'dtmf')).toEqual([]);
  });

  it('keeps the delay of the bridged voice the same after a key was sent in its place', () => {
    const { a, b, tickBoth } = bridgedPair();
    a.session.bridge(b.session);
    // Each frame the caller sends carries its own level, so B's packets show which one they are.
    let level = 1000;
    const lagAfterOneFrame = () => {
      a.farEnd({ payload: encodeG711('PCMA', frameOf(level)) });
      tickBoth();
      const sentLevel = decodeG711(
        'PCMU',
        (b.sent.at(-1) as (typeof b.sent)[number]).packet.payload,
      )[0] as number;
      const lag = Math.round((level - sentLevel) / 100);
      level += 100;
      return lag;
    };
    for (let i = 0; i < 6; i++) lagAfterOneFrame();
    const before = lagAfterOneFrame();
    b.session.sendDtmf('1', () => {});
    for (let i = 0; i < 12; i++) lagAfterOneFrame();
    expect(b.sent.some((s) => s.packet.payloadType === 96)).toBe(true);
    expect(lagAfterOneFrame()).toBe(before);
  });

  it('drops a key for a side that agreed no telephone-event', () => {
    const { a, b, tickBoth } = bridgedPair({ bRemote: { ...PCMU_REMOTE, telephoneEventPt: null } });
    a.session.bridge(b.session);
    const sender = new DtmfSender();
    sender.enqueue('3');
    const packet = sender.next(800);
    if (packet) a.farEnd({ payloadType: 96, payload: packet.payload, timestamp: packet.timestamp });
    tickBoth(8);
    expect(b.sent.every((s) => s.packet.payloadType === 0)).toBe(true);
    expect(a.session.stats.dtmfReceived).toBe(1);
  });

  it('ends when either side closes or unbridges: the other sends silence and feeds the assistant again', async () => {
    const { a, b, tickBoth } = bridgedPair();
    b.session.setForwardAudio(true);
    a.session.bridge(b.session);
    expect(() => a.session.bridge(harness().session)).toThrow(/already bridged/);
    a.session.unbridge();
    expect(b.session.bridgedTo).toBeNull();
    a.session.bridge(b.session);
    await a.session.close();
    expect(b.session.bridgedTo).toBeNull();
    for (let i = 0; i < 4; i++) b.farEnd({ payloadType: 0, payload: encodeG711('PCMU', frameOf(3000)) });
    tickBoth(8);
    const audio = b.events.filter((e) => e.type === 'audio') as { pcm: Int16Array }[];
    expect(audio).toHaveLength(2);
    expect(Math.max(...audio.flatMap((e) => [...e.pcm]))).toBeGreaterThan(2800);
    expect(() => b.session.bridge(a.session)).toThrow(/closed/);
  });

  it('stopRecording finalises the file at once; the rest of the call is not recorded and close reports the file', async () => {
    let writes = 0;
    let closes = 0;
    const recorder: FrameRecorder = {
      writeFrame: () => {
        writes++;
      },
      close: async () => {
        closes++;
        return { path: '/tmp/first-leg.wav' };
      },
    };
    const { session, tick } = harness({ recorder });
    session.setRemote(REMOTE, 0);
    tick(5);
    const [stopped, again] = await Promise.all([session.stopRecording(), session.stopRecording()]);
    expect(stopped).toEqual({ recordingPath: '/tmp/first-leg.wav' });
    expect(again).toEqual(stopped);
    tick(5);
    expect(writes).toBe(5);
    const result = await session.close();
    expect(result.recordingPath).toBe('/tmp/first-leg.wav');
    expect(closes).toBe(1);
  });
});
