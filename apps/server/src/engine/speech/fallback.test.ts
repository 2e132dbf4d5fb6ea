import { describe, expect, it } from 'vitest';
import { ProviderError } from '../brain/openai-client';
import { systemClock } from '../clock';
import { recognizerWithFallback, synthesisWithFallback } from './fallback';
import { collectSynthesis, type StreamingSynthesizer } from './synthesis';
import type { SpeechRecognizer } from './types';

const utterance = { pcm: new Int16Array(1600), sampleRate: 8000 as const };
const recognition = { language: 'zh' as const };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function recognizer(answer: () => Promise<string>): SpeechRecognizer & { calls: number } {
  const self = {
    calls: 0,
    async transcribe() {
      self.calls++;
      return { text: await answer(), durationMs: 200 };
    },
  };
  return self;
}

describe('recognizerWithFallback', () => {
  it('answers with the fallback when the primary fails, and says so', async () => {
    const primary = recognizer(async () => {
      throw new ProviderError('upstream', '语音识别服务暂时不可用', 503, 'speech_recognition');
    });
    const fallback = recognizer(async () => '我想问一下价格');
    const failures: unknown[] = [];
    const both = recognizerWithFallback(primary, fallback, {
      clock: systemClock,
      timeoutMs: 1000,
      onFallback: (err) => failures.push(err),
    });
    const heard = await both.transcribe(utterance, recognition);
    expect(heard).toMatchObject({ text: '我想问一下价格', fallback: true });
    expect(failures).toHaveLength(1);
    // A primary that just failed is not asked again on the next turn: the caller would wait twice.
    await both.transcribe(utterance, recognition);
    expect(primary.calls).toBe(1);
    expect(fallback.calls).toBe(2);
  });

  it('gives up on a primary slower than its timeout', async () => {
    const primary = recognizer(async () => {
      await sleep(2000);
      return '太慢了';
    });
    const fallback = recognizer(async () => '好的');
    const both = recognizerWithFallback(primary, fallback, { clock: systemClock, timeoutMs: 100 });
    const started = performance.now();
    const heard = await both.transcribe(utterance, recognition);
    expect(heard).toMatchObject({ text: '好的', fallback: true });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('keeps the primary when it answers, and passes a caller abort through', async () => {
    const primary = recognizer(async () => '可以');
    const fallback = recognizer(async () => '备用');
    const both = recognizerWithFallback(primary, fallback, { clock: systemClock, timeoutMs: 1000 });
    expect(await both.transcribe(utterance, recognition)).toEqual({ text: '可以', durationMs: 200 });
    const hungUp = new AbortController();
    hungUp.abort(new DOMException('hung up', 'AbortError'));
    const slow = recognizerWithFallback(
      recognizer(async () => {
        throw hungUp.signal.reason;
      }),
      fallback,
      { clock: systemClock, timeoutMs: 1000 },
    );
    await expect(slow.transcribe(utterance, { ...recognition, signal: hungUp.signal })).rejects.toThrow(
      'hung up',
    );
    expect(fallback.calls).toBe(0);
  });
});

/** A synthesiser that yields `chunks` tones, `gapMs` apart, after `firstMs`; may fail after `failAfter` chunks. */
function voice(options: {
  firstMs?: number;
  gapMs?: number;
  chunks?: number;
  failAfter?: number;
  level?: number;
}) {
  const seen: string[] = [];
  const synthesizer: StreamingSynthesizer = {
    async *stream(text, _voice, synthesis) {
      seen.push(text);
      await sleep(options.firstMs ?? 0);
      for (let i = 0; i < (options.chunks ?? 3); i++) {
        if (synthesis.signal?.aborted) return;
        if (options.failAfter !== undefined && i >= options.failAfter) {
          throw new ProviderError('upstream', '语音合成服务中断', undefined, 'speech_synthesis');
        }
        yield new Int16Array(160).fill(options.level ?? 1000);
        await sleep(options.gapMs ?? 0);
      }
    },
  };
  return { synthesizer, seen, voice: { voiceId: 'v', speed: 1, volume: 80 } };
}

describe('synthesisWithFallback', () => {
  it('speaks with the primary voice when it answers in time', async () => {
    const primary = voice({ level: 1000 });
    const fallback = voice({ level: 2000 });
    const speak = synthesisWithFallback(primary, fallback, { clock: systemClock, firstAudioTimeoutMs: 500 });
    const sentence = speak('您好。', 1, { sampleRate: 8000 });
    const pcm = await collectSynthesis(sentence.chunks);
    expect(pcm.length).toBe(480);
    expect(pcm[0]).toBe(1000);
    expect(sentence.fallback).toBe(false);
    expect(fallback.seen).toEqual([]);
  });

  it('switches to the fallback voice when the first audio is late', async () => {
    const primary = voice({ firstMs: 2000 });
    const fallback = voice({ level: 2000 });
    const failures: unknown[] = [];
    const speak = synthesisWithFallback(primary, fallback, {
      clock: systemClock,
      firstAudioTimeoutMs: 100,
      onFallback: (err) => failures.push(err),
    });
    const started = performance.now();
    const sentence = speak('请问您方便吗？', 1, { sampleRate: 8000 });
    const pcm = await collectSynthesis(sentence.chunks);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(pcm[0]).toBe(2000);
    expect(sentence.fallback).toBe(true);
    expect((failures[0] as ProviderError).kind).toBe('timeout');
    expect((failures[0] as ProviderError).message).toContain('语音合成服务响应超时');
  });

  it('says the whole sentence again in the fallback voice when the primary breaks mid-sentence', async () => {
    const primary = voice({ failAfter: 1, level: 1000 });
    const fallback = voice({ level: 2000 });
    const speak = synthesisWithFallback(primary, fallback, { clock: systemClock, firstAudioTimeoutMs: 500 });
    const sentence = speak('我们的套餐每月三十元。', 1, { sampleRate: 8000 });
    const pcm = await collectSynthesis(sentence.chunks);
    // One chunk of the primary, then the fallback's whole sentence: no turn is lost.
    expect(Array.from(pcm.filter((_, i) => i % 160 === 0))).toEqual([1000, 2000, 2000, 2000]);
    expect(fallback.seen).toEqual(['我们的套餐每月三十元。']);
    expect(sentence.fallback).toBe(true);
  });

  it('without a fallback, the primary failure reaches the caller of the stream', async () => {
    const primary = voice({ failAfter: 0 });
    const speak = synthesisWithFallback(primary, null, { clock: systemClock, firstAudioTimeoutMs: 500 });
    await expect(collectSynthesis(speak('您好', 1, { sampleRate: 8000 }).chunks)).rejects.toThrow(
      '语音合成服务中断',
    );
  });

  it('stops both voices at barge-in without switching', async () => {
    const primary = voice({ chunks: 50, gapMs: 20 });
    const fallback = voice({});
    const speak = synthesisWithFallback(primary, fallback, { clock: systemClock, firstAudioTimeoutMs: 500 });
    const bargeIn = new AbortController();
    const sentence = speak('这是一句很长的话。', 1, { sampleRate: 8000, signal: bargeIn.signal });
    let chunks = 0;
    for await (const _ of sentence.chunks) {
      chunks++;
      if (chunks === 2) bargeIn.abort();
    }
    expect(chunks).toBeLessThan(5);
    expect(fallback.seen).toEqual([]);
  });
});
