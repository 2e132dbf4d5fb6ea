import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../brain/openai-client';
import { VirtualClock } from '../clock';
import { collectSynthesis } from './synthesis';
import { startVolcengineSpeechServer, type VolcengineSpeechServer } from './testing/volcengine-speech-server';
import { createVolcengineSynthesizer, splitForVolcengine, volumeRatio } from './volcengine-synthesizer';

const APP_ID = '7300001234';
const TOKEN = 'volc-access-token-abcdefghij0123';
const VOICE = { voiceId: 'BV001_streaming', speed: 1, volume: 80 };

let vendor: VolcengineSpeechServer;
beforeAll(async () => {
  vendor = await startVolcengineSpeechServer({
    appId: APP_ID,
    token: TOKEN,
    slots: ['S_clone1'],
    msPerChar: 100,
  });
});
afterAll(() => vendor.close());
afterEach(() => {
  vendor.fault(null);
  vendor.ttsRequests.length = 0;
});

const synthesizer = (over: Partial<Parameters<typeof createVolcengineSynthesizer>[0]> = {}) =>
  createVolcengineSynthesizer({
    appId: APP_ID,
    token: TOKEN,
    cluster: 'volcano_tts',
    baseUrl: vendor.baseUrl,
    ...over,
  });

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

describe('Volcengine synthesis (HTTP)', () => {
  it('speaks at the rate asked for, with the voice settings mapped, and a fresh reqid each time', async () => {
    for (const sampleRate of [8000, 16000] as const) {
      const pcm = await collectSynthesis(
        synthesizer().stream(
          '您好，欢迎致电',
          { voiceId: 'BV001_streaming', speed: 1.5, volume: 100 },
          { sampleRate },
        ),
      );
      // Seven characters, 100 ms each, at the requested rate.
      expect(pcm.length).toBe(7 * sampleRate * 0.1);
      expect(Math.max(...pcm)).toBeGreaterThan(4000);
    }
    expect(vendor.ttsRequests.map((r) => r.rate)).toEqual([8000, 16000]);
    expect(vendor.ttsRequests[0]).toMatchObject({
      cluster: 'volcano_tts',
      voiceType: 'BV001_streaming',
      encoding: 'pcm',
      speedRatio: 1.5,
      volumeRatio: 1.25,
      code: 3000,
    });
    expect(new Set(vendor.ttsRequests.map((r) => r.reqid)).size).toBe(2);
    expect(volumeRatio(80)).toBe(1);
    expect(volumeRatio(0)).toBe(0.1);
  });

  it('speaks a cloned voice on volcano_icl once it is trained, and names the voice and cluster before that', async () => {
    const icl = synthesizer({ cluster: 'volcano_icl' });
    const untrained = await failure(
      collectSynthesis(icl.stream('您好', { ...VOICE, voiceId: 'S_clone1' }, { sampleRate: 8000 })),
    );
    expect(untrained.kind).toBe('not_found');
    expect(untrained.message).toBe(
      '火山引擎语音合成找不到该音色（3050），请检查音色 ID 与语音配置中的集群（复刻音色为 volcano_icl）',
    );
    vendor.finishTraining('S_clone1', true);
    const pcm = await collectSynthesis(
      icl.stream('您好', { ...VOICE, voiceId: 'S_clone1' }, { sampleRate: 8000 }),
    );
    expect(pcm.length).toBe(1600);
  });

  it('reads a long reply in several requests, in order', async () => {
    const text = `${'今天天气很好，'.repeat(60)}再见。`;
    expect(splitForVolcengine(text).every((piece) => [...piece].length <= 280)).toBe(true);
    const chunks: Int16Array[] = [];
    for await (const chunk of synthesizer().stream(text, VOICE, { sampleRate: 8000 })) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(1);
    expect(vendor.ttsRequests.map((r) => r.text).join('')).toBe(text);
    expect(chunks.reduce((n, c) => n + c.length, 0)).toBe([...text].length * 800);
  });

  it('names the Access Token on an auth failure and never repeats it; maps concurrency and outages', async () => {
    const auth = await failure(
      collectSynthesis(
        synthesizer({ token: 'wrong-token-1234567' }).stream('您好', VOICE, { sampleRate: 8000 }),
      ),
    );
    expect(auth.kind).toBe('auth');
    expect(auth.service).toBe('speech_synthesis');
    expect(auth.message).toBe(
      '火山引擎语音合成拒绝了 Access Token（HTTP 401），请检查语音配置中的 APP ID 与 Access Token',
    );
    expect(auth.message).not.toContain('wrong-token');

    const busy = await startVolcengineSpeechServer({
      appId: APP_ID,
      token: TOKEN,
      maxConcurrent: 1,
      synthesisMs: 500,
    });
    try {
      const both = [1, 2].map(() =>
        collectSynthesis(
          synthesizer({ baseUrl: busy.baseUrl }).stream('您好', VOICE, { sampleRate: 8000 }),
        ).then(
          () => null,
          (e: unknown) => e as ProviderError,
        ),
      );
      const refused = (await Promise.all(both)).filter(Boolean) as ProviderError[];
      expect(refused).toHaveLength(1);
      expect(refused[0]?.kind).toBe('rate_limit');
      expect(refused[0]?.message).toBe('火山引擎语音合成并发或用量超限（3003），请稍后再试或提高额度');
    } finally {
      await busy.close();
    }

    vendor.fault({ path: '/api/v1/tts', status: 500, code: 3031 });
    const outage = await failure(collectSynthesis(synthesizer().stream('您好', VOICE, { sampleRate: 8000 })));
    expect(outage.kind).toBe('upstream');
    expect(outage.message).toBe('火山引擎语音合成暂时不可用（3031），请稍后再试');
  });

  it('reports a connection cut mid-answer as a network failure', async () => {
    vendor.fault({ path: '/api/v1/tts', drop: true });
    const cut = await failure(collectSynthesis(synthesizer().stream('您好', VOICE, { sampleRate: 8000 })));
    expect(cut.kind).toBe('network');
  });

  it('ends quietly when aborted, and times out on the engine clock', async () => {
    const slow = await startVolcengineSpeechServer({ appId: APP_ID, token: TOKEN, delayMs: 3_000 });
    try {
      const stop = new AbortController();
      const aborted = collectSynthesis(
        synthesizer({ baseUrl: slow.baseUrl }).stream('您好', VOICE, {
          sampleRate: 8000,
          signal: stop.signal,
        }),
      );
      setTimeout(() => stop.abort(), 30);
      expect((await aborted).length).toBe(0);

      const clock = new VirtualClock();
      const pending = failure(
        collectSynthesis(
          synthesizer({ baseUrl: slow.baseUrl, clock, timeoutMs: 2_000 }).stream('您好', VOICE, {
            sampleRate: 8000,
          }),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      await clock.advance(2_000);
      const err = await pending;
      expect(err.kind).toBe('timeout');
      expect(err.message).toBe('语音合成服务响应超时（超过 2 秒），请稍后再试');
    } finally {
      await slow.close();
    }
  });
});
