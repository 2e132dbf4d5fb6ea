import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../brain/openai-client';
import { systemClock } from '../../clock';
import { ReplyQueue } from '../../session/reply-queue';
import { createEspeakSynthesizer } from '../../speech/espeak';
import { type SentenceAudio, synthesisWithFallback } from '../../speech/fallback';
import { wavToPcm } from '../../speech/resample';
import type { StreamingSynthesizer } from '../../speech/synthesis';
import type { RecognitionSession, SpeechRecognizer } from '../../speech/types';
import { loadVad, type Vad } from '../../speech/vad';
import type { MediaSession } from '../media/media-engine';
import { SipCallLeg, type SipLegOptions } from './call-leg';
import type { InviteSession } from './user-agent';

/*
 * A reply spoken while it is still being written: sentences reach the leg one by one, each is
 * synthesised as it arrives (ahead of playback) and queued on the media session back to back,
 * the way the media worker plays them. The stand-in media session plays its queue at real time.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const espeak = createEspeakSynthesizer();
let vad: Vad;
let caller: Int16Array;

beforeAll(async () => {
  vad = await loadVad();
  caller = wavToPcm(
    (await espeak.synthesize('等一下，我有个问题。', { voiceId: 'cmn+m3', speed: 1, volume: 80 })).audio,
  );
});
afterAll(() => espeak.close());

/** The media worker's play queue: items play one after another at real time; stop cuts them all. */
class QueueMedia extends EventEmitter {
  readonly plays: { samples: number; at: number }[] = [];
  stoppedAt: number | null = null;
  private readonly queue: {
    samples: number;
    resolve: (o: { playedMs: number; interrupted: boolean }) => void;
  }[] = [];
  private running = false;

  play(pcm: Int16Array) {
    if (pcm.length % 160 !== 0 && this.queue.length > 0) {
      // Only a sentence's last piece may end off a frame boundary.
      this.misaligned++;
    }
    this.plays.push({ samples: pcm.length, at: performance.now() });
    return new Promise<{ playedMs: number; interrupted: boolean }>((resolve) => {
      this.queue.push({ samples: pcm.length, resolve });
      void this.run();
    });
  }
  misaligned = 0;

  private async run() {
    if (this.running) return;
    this.running = true;
    while (this.queue.length > 0) {
      const item = this.queue[0]!;
      await sleep(item.samples / 8);
      if (this.queue[0] !== item) continue;
      this.queue.shift();
      item.resolve({ playedMs: item.samples / 8, interrupted: false });
    }
    this.running = false;
  }

  async stopPlayback() {
    this.stoppedAt = performance.now();
    for (const item of this.queue.splice(0)) item.resolve({ playedMs: 0, interrupted: true });
  }

  async setForwardAudio() {}
  async sendDtmf() {}
  async close() {}
}

/** Audio for a sentence: 100 ms per character, in 70 ms chunks (not frame-aligned), `firstMs` to the first. */
function toneVoice(options: { firstMs: number; chunkGapMs?: number; failFor?: string }) {
  const asked: { text: string; at: number }[] = [];
  const synthesizer: StreamingSynthesizer = {
    async *stream(text, _voice, synthesis) {
      asked.push({ text, at: performance.now() });
      await sleep(options.firstMs);
      if (options.failFor && text.includes(options.failFor)) {
        throw new ProviderError('upstream', '语音合成服务中断', undefined, 'speech_synthesis');
      }
      let left = [...text].length * 800;
      while (left > 0) {
        if (synthesis.signal?.aborted) return;
        const size = Math.min(560, left);
        left -= size;
        yield new Int16Array(size).fill(3000);
        await sleep(options.chunkGapMs ?? 5);
      }
    },
  };
  return { synthesizer, asked, voice: { voiceId: 'tone', speed: 1, volume: 80 } };
}

function legWith(
  speakSentence: (text: string, speed: number, signal: AbortSignal) => SentenceAudio,
  extra: Partial<SipLegOptions> = {},
) {
  const media = new QueueMedia();
  const session = {
    whenEnded: new Promise(() => {}),
    bye: async () => {},
  } as unknown as InviteSession;
  const leg = new SipCallLeg({
    id: 'leg-stream',
    direction: 'outbound',
    from: '02160881000',
    to: '13800000000',
    answeredAt: Date.now(),
    clock: systemClock,
    session,
    media: media as unknown as MediaSession,
    endpointer: vad.createEndpointer(),
    synthesize: async () => new Int16Array(0),
    speakSentence,
    recognizer: { transcribe: async () => ({ text: '等一下，我有个问题。', durationMs: 1200 }) },
    transfer: async () => ({ ok: false }),
    ...extra,
  });
  return { leg, media };
}

describe('SIP leg streamed replies', () => {
  it('plays the first sentence while the rest of the reply is still being written', async () => {
    const tone = toneVoice({ firstMs: 60 });
    const speak = synthesisWithFallback(tone, null, { clock: systemClock, firstAudioTimeoutMs: 1000 });
    const { leg, media } = legWith((text, speed, signal) => speak(text, speed, { sampleRate: 8000, signal }));
    const reply = new ReplyQueue();
    const started = performance.now();
    const speaking = leg.sayStream(reply, { interruptible: true });
    reply.push('您好，');
    // The brain is still writing: 400 ms until its next sentence.
    await sleep(400);
    const playsBeforeSecond = media.plays.length;
    const firstPlayAt = media.plays[0]?.at ?? Number.POSITIVE_INFINITY;
    reply.push('我们的新套餐每月三十元。');
    await sleep(100);
    reply.push('请问您需要了解吗？');
    reply.end();
    const played = await speaking;

    expect(playsBeforeSecond).toBeGreaterThan(0);
    expect(firstPlayAt - started).toBeLessThan(250);
    expect(played.text).toBe('您好，我们的新套餐每月三十元。请问您需要了解吗？');
    expect(played.interrupted).toBe(false);
    // 3 + 12 + 9 characters at 100 ms each, all of it played.
    expect(played.playedMs).toBe(2400);
    expect(played.firstAudioMs).toBeGreaterThanOrEqual(50);
    expect(played.firstAudioMs).toBeLessThan(250);
    expect(played.fallback).toBe(false);
    // Sentence three was synthesised while sentence two played, not after it.
    const third = tone.asked.find((a) => a.text.startsWith('请问'))!;
    expect(third.at - started).toBeLessThan(1000);
    // Vendor chunks of 70 ms were re-cut to whole frames: no click of padding between them.
    expect(media.misaligned).toBe(0);
  });

  it('stops within 300 ms when the caller talks over it, and cancels the sentences not yet spoken', async () => {
    const tone = toneVoice({ firstMs: 20 });
    const signals: AbortSignal[] = [];
    const speak = synthesisWithFallback(tone, null, { clock: systemClock, firstAudioTimeoutMs: 1000 });
    const { leg, media } = legWith((text, speed, signal) => {
      signals.push(signal);
      return speak(text, speed, { sampleRate: 8000, signal });
    });
    const reply = new ReplyQueue();
    const speaking = leg.sayStream(reply, { interruptible: true });
    reply.push('这是一段很长很长的介绍，我们公司成立于二零零八年，专注于为客户提供优质的服务。');
    await sleep(300);
    // The caller talks: 300 ms of quiet line, then speech, in 80 ms batches as the worker forwards them.
    const audio = new Int16Array(2400 + caller.length + 8000);
    audio.set(caller, 2400);
    let speechFrom = 0;
    const talking = (async () => {
      for (let offset = 0; offset < audio.length; offset += 640) {
        if (offset >= 2400 && speechFrom === 0) speechFrom = performance.now();
        media.emit('audio', audio.slice(offset, offset + 640));
        await sleep(80);
        if (offset === 6400) reply.push('第二句不该再合成了。');
      }
    })();
    const played = await speaking;
    reply.end();
    await talking;

    expect(played.interrupted).toBe(true);
    expect(media.stoppedAt).not.toBeNull();
    expect(media.stoppedAt! - speechFrom).toBeLessThan(300);
    expect(signals[0]?.aborted).toBe(true);
    expect(tone.asked.map((a) => a.text)).not.toContain('第二句不该再合成了。');
    const heard = await leg.listen({ timeoutMs: 3000 });
    expect(heard?.text).toBe('等一下，我有个问题。');
  });

  it('loses no sentence when the primary voice fails: the fallback speaks it and the result says so', async () => {
    const primary = toneVoice({ firstMs: 20, failFor: '三十元' });
    const backup = toneVoice({ firstMs: 20 });
    const speak = synthesisWithFallback(primary, backup, { clock: systemClock, firstAudioTimeoutMs: 1000 });
    const { leg } = legWith((text, speed, signal) => speak(text, speed, { sampleRate: 8000, signal }));
    const reply = new ReplyQueue();
    const speaking = leg.sayStream(reply, { interruptible: true });
    reply.push('您好。');
    reply.push('套餐每月三十元。');
    reply.end();
    const played = await speaking;
    expect(played.text).toBe('您好。套餐每月三十元。');
    expect(played.playedMs).toBe(1100);
    expect(played.fallback).toBe(true);
    expect(backup.asked.map((a) => a.text)).toEqual(['套餐每月三十元。']);
  });
});

/** A streaming recogniser whose partial becomes `text` after `afterMs` of audio written. */
function partialRecognizer(text: string, afterMs = 600): SpeechRecognizer {
  return {
    transcribe: async () => ({ text, durationMs: 1000 }),
    openSession(): RecognitionSession {
      let written = 0;
      let listener: (partial: string) => void = () => {};
      return {
        write(pcm) {
          const before = written;
          written += pcm.length / 8;
          if (before < afterMs && written >= afterMs) listener(text);
        },
        onPartial(next) {
          listener = next;
        },
        finish: async () => ({ text, durationMs: written }),
        abort() {},
      };
    },
  };
}

async function speakAndListen(leg: SipCallLeg, media: QueueMedia) {
  const audio = new Int16Array(2400 + caller.length + 16_000);
  audio.set(caller, 2400);
  const heard = leg.listen({ timeoutMs: 5000 });
  for (let offset = 0; offset < audio.length; offset += 640) {
    media.emit('audio', audio.slice(offset, offset + 640));
    await sleep(20);
  }
  return heard;
}

describe('SIP leg end of turn', () => {
  it('ends the turn early when the streaming text stops changing on a full stop', async () => {
    const { leg, media } = legWith(() => ({ chunks: (async function* () {})(), fallback: false }), {
      recognizer: partialRecognizer('等一下，我有个问题。'),
    });
    const heard = await speakAndListen(leg, media);
    expect(heard?.text).toBe('等一下，我有个问题。');
    // 300 ms of silence instead of the VAD's 700 ms hang.
    expect(heard?.endpointMs).toBeGreaterThanOrEqual(300);
    expect(heard?.endpointMs).toBeLessThan(500);
  });

  it('waits the full hang when the text does not read as finished', async () => {
    const { leg, media } = legWith(() => ({ chunks: (async function* () {})(), fallback: false }), {
      recognizer: partialRecognizer('等一下我有个'),
    });
    const heard = await speakAndListen(leg, media);
    expect(heard?.text).toBe('等一下我有个');
    expect(heard?.endpointMs).toBeGreaterThanOrEqual(700);
  });
});
