import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../brain/openai-client';
import { systemClock, VirtualClock } from '../../clock';
import { createEspeakSynthesizer } from '../../speech/espeak';
import { createFunAsrRecognizer } from '../../speech/funasr-recognizer';
import { wavToPcm } from '../../speech/resample';
import { type FunAsrServer, startFunAsrServer } from '../../speech/testing/funasr-server';
import type { SpeechRecognizer } from '../../speech/types';
import { loadVad, type Vad } from '../../speech/vad';
import type { MediaSession } from '../media/media-engine';
import { SipCallLeg, type SipLegOptions } from './call-leg';
import { transferFailureOf } from './sip-adapter';
import type { InviteSession } from './user-agent';

/*
 * Barge-in on a real line, with the real VAD and real Mandarin speech (the offline synthesiser at
 * 8 kHz): the far end's media session is played by an in-memory stand-in that plays at real time
 * and stops when told, so what is measured is the leg's decision, not RTP.
 */

const synthesizer = createEspeakSynthesizer();
let vad: Vad;
let caller: Int16Array;

beforeAll(async () => {
  vad = await loadVad();
  const voice = { voiceId: 'cmn+m3', speed: 1, volume: 80 };
  caller = wavToPcm((await synthesizer.synthesize('不用了，谢谢，我现在不需要。', voice)).audio);
});
afterAll(() => synthesizer.close());

/** The media worker as the leg sees it: audio batches in, playback that can be cut short. */
class FakeMedia extends EventEmitter {
  stoppedAt: number | null = null;
  private finish: ((outcome: { playedMs: number; interrupted: boolean }) => void) | null = null;
  private playStarted = 0;

  play(pcm: Int16Array) {
    this.playStarted = performance.now();
    return new Promise<{ playedMs: number; interrupted: boolean }>((resolve) => {
      const timer = setTimeout(
        () => resolve({ playedMs: pcm.length / 8, interrupted: false }),
        pcm.length / 8,
      );
      this.finish = (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      };
    });
  }

  async stopPlayback() {
    this.stoppedAt = performance.now();
    this.finish?.({ playedMs: Math.round(this.stoppedAt - this.playStarted), interrupted: true });
  }

  async setForwardAudio() {}
  async sendDtmf() {}
  async close() {}
}

function legWith(recognizer: SpeechRecognizer | null, extra: Partial<SipLegOptions> = {}) {
  const media = new FakeMedia();
  let endCall: (end: { by: 'local' | 'remote' }) => void = () => {};
  const session = {
    whenEnded: new Promise((resolve) => {
      endCall = resolve;
    }),
    bye: async () => endCall({ by: 'local' }),
  } as unknown as InviteSession;
  const leg = new SipCallLeg({
    id: 'leg-1',
    direction: 'inbound',
    from: '13800000000',
    to: '02160881000',
    answeredAt: Date.now(),
    clock: systemClock,
    session,
    media: media as unknown as MediaSession,
    endpointer: vad.createEndpointer(),
    // Eight seconds of a steady tone: long enough to be talked over.
    synthesize: async () =>
      Int16Array.from({ length: 64_000 }, (_, i) =>
        Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000)),
      ),
    recognizer,
    transfer: async () => ({ ok: false }),
    ...extra,
  });
  return { leg, media };
}

/**
 * The caller talks over the assistant: 300 ms of quiet line, the sentence, then a second of quiet
 * for the VAD to hear the end, in 80 ms batches as the worker forwards them.
 */
async function talkOver(media: FakeMedia) {
  const audio = new Int16Array(2400 + caller.length + 8000);
  audio.set(caller, 2400);
  let speechFrom: number | null = null;
  for (let offset = 0; offset < audio.length; offset += 640) {
    if (offset >= 2400 && speechFrom === null) speechFrom = performance.now();
    media.emit('audio', audio.slice(offset, offset + 640));
    await new Promise((resolve) => setTimeout(resolve, 80));
  }
  return { speechFrom: speechFrom ?? performance.now() };
}

describe('SIP leg barge-in', () => {
  it('stops the assistant soon after the caller starts talking, and hands over what was said', async () => {
    const recognizer: SpeechRecognizer = {
      transcribe: async () => ({ text: '不用了，谢谢。', durationMs: 120 }),
    };
    const { leg, media } = legWith(recognizer);
    const said = leg.say('（长句）', { interruptible: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const talking = talkOver(media);
    const played = await said;
    const { speechFrom } = await talking;

    expect(played.interrupted).toBe(true);
    expect(media.stoppedAt).not.toBeNull();
    // The VAD needs a few frames of speech to decide; well under half a second after it starts.
    expect((media.stoppedAt as number) - speechFrom).toBeLessThan(500);
    const heard = await leg.listen({ timeoutMs: 5000 });
    expect(heard?.text).toBe('不用了，谢谢。');
    await leg.hangup();
  }, 30_000);

  it('without a recogniser lets the assistant finish: words it cannot understand do not cut it off', async () => {
    const { leg, media } = legWith(null);
    const said = leg.say('（长句）', { interruptible: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await talkOver(media);
    expect(media.stoppedAt).toBeNull();
    // A key still does.
    media.emit('dtmf', '1');
    const played = await said;
    expect(played.interrupted).toBe(true);
    await leg.hangup();
  }, 30_000);
});

/** `promise`, or a failure naming `what` after `ms`: a missing event fails fast, not at the test timeout. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Where `needle` first occurs in `haystack`, or -1. */
function indexOfSamples(haystack: Int16Array, needle: Int16Array): number {
  outer: for (let at = 0; at + needle.length <= haystack.length; at++) {
    for (let i = 0; i < needle.length; i++) if (haystack[at + i] !== needle[i]) continue outer;
    return at;
  }
  return -1;
}

/**
 * The caller speaks with nobody talking over: 300 ms of quiet line, the sentence (or its first
 * `speechMs`), then a second of quiet, in the worker's 80 ms batches at real time. `stop` ends
 * the line early.
 */
async function speak(media: FakeMedia, options: { speechMs?: number; stop?: () => boolean } = {}) {
  const speech = options.speechMs === undefined ? caller : caller.subarray(0, options.speechMs * 8);
  const audio = new Int16Array(2400 + speech.length + 8000);
  audio.set(speech, 2400);
  // The synthesiser's audio ends in a quiet tail: the voice stops at its last loud sample.
  let lastLoud = speech.length - 1;
  while (lastLoud > 0 && Math.abs(speech[lastLoud] as number) < 500) lastLoud--;
  let voiceEndAt = performance.now();
  for (let offset = 0; offset < audio.length; offset += 640) {
    if (options.stop?.()) break;
    media.emit('audio', audio.slice(offset, offset + 640));
    if (offset <= 2400 + lastLoud) voiceEndAt = performance.now() + 80;
    await new Promise((resolve) => setTimeout(resolve, 80));
  }
  return { voiceEndAt };
}

const SAID = '不用了，谢谢，我现在不需要。';
/** FunASR's script: the sentence grows with every second of loud audio, whole at the end. */
const growingSentence = ({ pcm, final }: { pcm: Int16Array; final: boolean }) => {
  let loud = 0;
  for (const sample of pcm) if (Math.abs(sample) > 500) loud++;
  if (loud === 0) return '';
  return final ? SAID : SAID.slice(0, Math.min(SAID.length - 1, 2 + Math.floor(pcm.length / 1600)));
};

/** `transcribe` must not be asked: the streaming path alone hears the caller. */
function streamingOnly(server: FunAsrServer, over: { timeoutMs?: number } = {}): SpeechRecognizer {
  const funasr = createFunAsrRecognizer({ url: server.url, ...over });
  return {
    transcribe: async () => {
      throw new Error('transcribe() called: the leg did not use the streaming session');
    },
    openSession: funasr.openSession?.bind(funasr),
  };
}

/*
 * Streaming recognition on the leg, against a local server speaking FunASR's websocket protocol
 * (2pass): every test plays ~4 s of real-time audio, so they run side by side.
 */
describe.concurrent('SIP leg streaming recognition', () => {
  it('streams the caller’s speech as it is spoken: partials before they stop, the final soon after', async () => {
    let heardAudio = new Int16Array(0);
    const server = await startFunAsrServer({
      listen: (heard) => {
        if (heard.final) heardAudio = heard.pcm.slice();
        return growingSentence(heard);
      },
    });
    try {
      const partials: { text: string; at: number }[] = [];
      const { leg, media } = legWith(streamingOnly(server), {
        onPartial: (text) => partials.push({ text, at: performance.now() }),
      });
      let heardAt = 0;
      const listening = leg.listen({ timeoutMs: 10_000 }).then((utterance) => {
        heardAt = performance.now();
        return utterance;
      });
      const { voiceEndAt } = await speak(media);
      const utterance = await listening;

      expect(utterance?.text).toBe(SAID);
      // Heard while still speaking: the vendor had the audio before the caller stopped.
      expect(partials.length).toBeGreaterThan(0);
      expect(partials[0]?.at).toBeLessThan(voiceEndAt);
      expect(SAID.startsWith(partials[0]?.text ?? '?')).toBe(true);
      expect(leg.partial).toBe(SAID);
      // The final costs the last decode, not a replay of the ~2.5 s utterance: the VAD's 700 ms
      // of silence, then well under a second (the session runs up to its pre-roll behind real time).
      const callerMs = caller.length / 8;
      expect(callerMs).toBeGreaterThan(2000);
      expect(utterance?.recognitionMs).toBeLessThan(1000);
      expect(heardAt - voiceEndAt).toBeLessThan(700 + 1000);
      // One 2pass connection, and it heard the first syllable's onset (the pre-roll before the
      // VAD's start decision was sent).
      expect(server.sessions).toHaveLength(1);
      expect(server.sessions[0]?.config?.mode).toBe('2pass');
      const onset = caller.findIndex((sample) => sample !== 0);
      expect(indexOfSamples(heardAudio, caller.subarray(onset, onset + 160))).toBeGreaterThanOrEqual(0);
      expect(heardAudio.length / 8).toBeLessThan(callerMs + 1200);
      await leg.hangup();
    } finally {
      await server.close();
    }
  }, 20_000);

  it('closes the recogniser’s connection when the caller hangs up mid-sentence', async () => {
    const server = await startFunAsrServer({ listen: growingSentence });
    try {
      const { leg, media } = legWith(streamingOnly(server));
      const listening = leg.listen({ timeoutMs: 10_000 });
      const talking = speak(media, { speechMs: 1500, stop: () => leg.ended !== null });
      await within(server.connected(1), 3000, 'the leg opening a session at speech start');
      // Mid-sentence: the VAD started, the session streams, nobody has stopped talking yet.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(leg.ended).toBeNull();

      await leg.hangup();
      const closed = await within(server.sessions[0]!.closed, 3000, 'the socket closing at hang-up');
      expect(closed).toEqual({ code: 1000, byServer: false });
      // No end flag: nothing was asked of the recogniser after the caller left.
      expect(server.sessions[0]?.ended).toBe(false);
      expect(await listening).toBeNull();
      await talking;
      expect(server.sessions).toHaveLength(1);
    } finally {
      await server.close();
    }
  }, 20_000);

  it('recovers the turn through transcribe() when the stream breaks mid-sentence', async () => {
    const server = await startFunAsrServer({ listen: growingSentence });
    try {
      // The server process dies 600 ms into the utterance; it is back for the next connection.
      server.failMidStream({ afterAudioMs: 600, how: 'drop' });
      const errors: unknown[] = [];
      const { leg, media } = legWith(createFunAsrRecognizer({ url: server.url }), {
        onError: (err) => errors.push(err),
      });
      const listening = leg.listen({ timeoutMs: 10_000 });
      const talking = speak(media);
      await within(server.connected(1), 3000, 'the leg opening a session at speech start');
      server.failMidStream(null);
      const utterance = await listening;
      await talking;

      expect(utterance?.text).toBe(SAID);
      expect(server.sessions.map((session) => session.config?.mode)).toEqual(['2pass', 'offline']);
      expect(await server.sessions[0]?.closed).toMatchObject({ byServer: true });
      // The whole utterance went to the fallback, not just what followed the break.
      expect(server.sessions[1]?.audioMs).toBeGreaterThan(caller.length / 8);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(ProviderError);
      expect((errors[0] as ProviderError).kind).toBe('upstream');
      await leg.hangup();
    } finally {
      await server.close();
    }
  }, 20_000);

  it('counts the turn as silence when the final never comes, without a second wait', async () => {
    const server = await startFunAsrServer({ listen: growingSentence });
    try {
      server.finalDelay('never');
      const errors: unknown[] = [];
      const { leg, media } = legWith(createFunAsrRecognizer({ url: server.url, timeoutMs: 800 }), {
        onError: (err) => errors.push(err),
      });
      const talking = speak(media);
      const heard = await leg.listen({ timeoutMs: 3000 });
      await talking;

      expect(heard).toBeNull();
      expect(errors).toHaveLength(1);
      expect((errors[0] as ProviderError).kind).toBe('timeout');
      // No transcribe() after the timeout: one connection, which the leg closed.
      expect(server.sessions).toHaveLength(1);
      expect(await server.sessions[0]?.closed).toMatchObject({ byServer: false });
      await leg.hangup();
    } finally {
      await server.close();
    }
  }, 20_000);
});

describe('SIP leg for IVR flows', () => {
  /** The caller's audio pushed at once, as the worker's batches (the VAD does not care how fast). */
  function sayAtOnce(media: FakeMedia) {
    const audio = new Int16Array(2400 + caller.length + 8000);
    audio.set(caller, 2400);
    for (let offset = 0; offset < audio.length; offset += 640)
      media.emit('audio', audio.slice(offset, offset + 640));
  }

  it('a menu waiting for one key hears it at once; without maxDigits the key waits for the pause that ends a number', async () => {
    const clock = new VirtualClock();
    const { leg, media } = legWith(null, { clock });
    const menu = leg.listen({ timeoutMs: 5_000, maxDigits: 1 });
    const pressedAt = clock.now();
    media.emit('dtmf', '2');
    const heard = await clock.run(menu);
    expect(heard).toMatchObject({ dtmf: '2', text: '' });
    expect(clock.now() - pressedAt).toBe(0);

    const number = leg.listen({ timeoutMs: 5_000 });
    const typedAt = clock.now();
    media.emit('dtmf', '2');
    expect((await clock.run(number))?.dtmf).toBe('2');
    expect(clock.now() - typedAt).toBeGreaterThanOrEqual(1_500);
    await leg.hangup();
  });

  it('keys typed over the prompt make the answer at once; keys typed ahead are the next answer', async () => {
    const clock = new VirtualClock();
    const { leg, media } = legWith(null, { clock });
    media.emit('dtmf', '1');
    media.emit('dtmf', '3');
    const answers = await clock.run(async () => [
      await leg.listen({ timeoutMs: 5_000, maxDigits: 1 }),
      await leg.listen({ timeoutMs: 5_000, maxDigits: 1 }),
    ]);
    expect(answers.map((answer) => answer?.dtmf)).toEqual(['1', '3']);
    // `#` ends a longer answer before its maximum.
    const collect = leg.listen({ timeoutMs: 5_000, maxDigits: 11 });
    for (const key of '8001#') media.emit('dtmf', key);
    expect((await clock.run(collect))?.dtmf).toBe('8001#');
    await leg.hangup();
  });

  it('useMedia: from then on it speaks with the new voice and hears with the new recogniser', async () => {
    const flowVoice = new Int16Array(1600).fill(1000);
    const assistantVoice = new Int16Array(1600).fill(2000);
    const played: Int16Array[] = [];
    const { leg, media } = legWith(null, { synthesize: async () => flowVoice });
    const play = media.play.bind(media);
    media.play = (pcm: Int16Array) => {
      played.push(pcm);
      return play(pcm);
    };
    await leg.say('您好，欢迎致电。', { interruptible: false });
    sayAtOnce(media);
    // No recogniser yet: the caller's words are not understood.
    expect(await leg.listen({ timeoutMs: 300 })).toBeNull();

    leg.useMedia({
      synthesize: async () => assistantVoice,
      recognizer: { transcribe: async () => ({ text: '我要报修宽带', durationMs: 100 }) },
    });
    await leg.say('请问有什么可以帮您？', { interruptible: false });
    expect(played.map((pcm) => pcm[0])).toEqual([1000, 2000]);
    const listening = leg.listen({ timeoutMs: 3_000 });
    sayAtOnce(media);
    expect((await listening)?.text).toBe('我要报修宽带');
    await leg.hangup();
  });

  it('playAudio plays the recorded prompt as it is, cut short by a key only when interruptible', async () => {
    const prompt = Int16Array.from({ length: 8000 }, (_, i) => (i % 16) * 100);
    const { leg, media } = legWith(null);
    const played: Int16Array[] = [];
    const play = media.play.bind(media);
    media.play = (pcm: Int16Array) => {
      played.push(pcm);
      return play(pcm);
    };
    const whole = await leg.playAudio(prompt, { interruptible: false });
    expect(played[0]).toEqual(prompt);
    expect(whole).toMatchObject({ interrupted: false, playedMs: 1000 });

    const cut = leg.playAudio(prompt, { interruptible: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    media.emit('dtmf', '1');
    expect((await cut).interrupted).toBe(true);
    expect((await leg.listen({ timeoutMs: 2_000, maxDigits: 1 }))?.dtmf).toBe('1');
    await leg.hangup();
  });

  it('a transfer outcome names why it failed, from the target’s final response', () => {
    expect(
      [486, 600, 408, 480, 487, 503, 404, undefined].map((status) => transferFailureOf({ status })),
    ).toEqual(['busy', 'busy', 'no_answer', 'no_answer', 'no_answer', 'failed', 'failed', 'failed']);
    expect(transferFailureOf({ timedOut: true })).toBe('no_answer');
  });
});
