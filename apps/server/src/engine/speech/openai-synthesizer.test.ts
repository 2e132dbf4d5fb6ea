import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ProviderError } from '../brain/openai-client';
import { VirtualClock } from '../clock';
import { createOpenAISynthesizer } from './openai-synthesizer';
import { collectSynthesis, type SynthesisVoice } from './synthesis';
import { levelOf, type OpenAISpeechServer, startOpenAISpeechServer } from './testing/openai-speech-server';

const API_KEY = 'sk-tts-live-abcdefghijklmnop5678';
const MODEL = 'tts-1';
const MS_PER_CHAR = 40;
const VOICE: SynthesisVoice = { voiceId: 'alloy', speed: 1, volume: 80 };

let server: OpenAISpeechServer;

beforeAll(async () => {
  server = await startOpenAISpeechServer({ apiKey: API_KEY, models: [MODEL], msPerChar: MS_PER_CHAR });
});
afterAll(() => server.close());
afterEach(() => {
  server.requests.length = 0;
  server.behave(() => ({}));
});

const synthesizer = (over: Partial<Parameters<typeof createOpenAISynthesizer>[0]> = {}) =>
  createOpenAISynthesizer({ baseUrl: server.baseUrl, apiKey: API_KEY, model: MODEL, ...over });

/** The level in the middle of each character's stretch: what a listener hears, in order. */
function levels(pcm: Int16Array, chars: number, rate: number): number[] {
  const perChar = (rate * MS_PER_CHAR) / 1000;
  return Array.from({ length: chars }, (_, i) => pcm[Math.round(i * perChar + perChar / 2)] ?? 0);
}
const expected = (chars: number, gain = 1) => Array.from({ length: chars }, (_, i) => levelOf(i) * gain);
const close = (actual: number[], wanted: number[]) =>
  actual.every((value, i) => Math.abs(value - (wanted[i] ?? 0)) <= Math.max(20, (wanted[i] ?? 0) * 0.01));

async function failure(work: AsyncIterable<Int16Array> | Promise<unknown>): Promise<ProviderError> {
  const err = await (work instanceof Promise ? work : collectSynthesis(work)).then(
    () => {
      throw new Error('expected the synthesis to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  const provider = err as ProviderError;
  expect(provider.service).toBe('speech_synthesis');
  expect(inspect(provider, { depth: 5 })).not.toContain(API_KEY);
  expect(JSON.stringify(provider)).not.toContain(API_KEY);
  return provider;
}

describe('OpenAI-compatible synthesiser', () => {
  it('asks for 24 kHz pcm with the key, model, voice and speed, and streams it down to 8 kHz in order', async () => {
    server.behave(() => ({ frameIntervalMs: 40, frameBytes: 1920 }));
    const text = '您好，这里是示例教育。';
    const chars = [...text].length;
    const chunks: { samples: Int16Array; framesSentThen: number }[] = [];
    for await (const samples of synthesizer().stream(
      ` ${text} `,
      { ...VOICE, speed: 1.5 },
      {
        sampleRate: 8000,
      },
    )) {
      chunks.push({ samples, framesSentThen: server.requests[0]?.framesSent ?? 0 });
    }

    const [request] = server.requests;
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.body).toEqual({
      model: MODEL,
      input: text,
      voice: 'alloy',
      response_format: 'pcm',
      speed: 1.5,
    });
    // Streaming: the first audio was in hand while the server was still rendering the rest.
    const totalFrames = request?.framesSent ?? 0;
    expect(totalFrames).toBe(Math.ceil((chars * 24 * MS_PER_CHAR * 2) / 1920));
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks[0]?.framesSentThen).toBeLessThan(totalFrames);

    const pcm = await collectSynthesis(
      (async function* () {
        for (const chunk of chunks) yield chunk.samples;
      })(),
    );
    // 40 ms per character at 8 kHz: every character, at the requested rate, in order.
    expect(pcm.length).toBe(chars * 320);
    expect(close(levels(pcm, chars, 8000), expected(chars))).toBe(true);
  });

  it('reads a server that answers a WAV instead (open sizes, stereo, its own rate) and streams it at the rate asked', async () => {
    server.behave(() => ({ forceFormat: 'wav', wavSampleRate: 16000, wavChannels: 2, frameBytes: 1001 }));
    const text = '请问您现在方便接听吗';
    const chars = [...text].length;
    const at16k = await collectSynthesis(synthesizer().stream(text, VOICE, { sampleRate: 16000 }));
    expect(at16k.length).toBe(chars * 640);
    // Same rate as asked: the samples pass through untouched.
    expect(levels(at16k, chars, 16000)).toEqual(expected(chars));

    const at8k = await collectSynthesis(synthesizer().stream(text, VOICE, { sampleRate: 8000 }));
    expect(at8k.length).toBe(chars * 320);
    expect(close(levels(at8k, chars, 8000), expected(chars))).toBe(true);
  });

  it('carries a sample split across chunks, and applies the volume', async () => {
    const text = '好的，谢谢';
    const chars = [...text].length;
    server.behave(() => ({ frameBytes: 1920 }));
    const even = await collectSynthesis(synthesizer().stream(text, VOICE, { sampleRate: 16000 }));
    server.behave(() => ({ frameBytes: 777 }));
    const odd = await collectSynthesis(synthesizer().stream(text, VOICE, { sampleRate: 16000 }));
    expect(odd).toEqual(even);

    const quiet = await collectSynthesis(
      synthesizer().stream(text, { ...VOICE, volume: 40 }, { sampleRate: 16000 }),
    );
    expect(close(levels(quiet, chars, 16000), expected(chars, 0.5))).toBe(true);
  });

  it('sends no key header to a local server that needs none, and asks nothing for empty text', async () => {
    const open = await startOpenAISpeechServer({ msPerChar: MS_PER_CHAR });
    try {
      const local = createOpenAISynthesizer({ baseUrl: open.baseUrl, apiKey: '', model: 'cosyvoice' });
      expect(await collectSynthesis(local.stream('  ', VOICE, { sampleRate: 8000 }))).toHaveLength(0);
      expect(open.requests).toHaveLength(0);
      const pcm = await collectSynthesis(local.stream('您好', VOICE, { sampleRate: 8000 }));
      expect(pcm.length).toBe(640);
      expect(open.requests[0]?.headers.authorization).toBeUndefined();
    } finally {
      await open.close();
    }
  });

  it('maps a refused key, an unknown model and a server error to Chinese errors naming 语音配置, without retrying', async () => {
    const wrong = 'sk-wrong-tts-key-000000000000';
    const denied = await failure(synthesizer({ apiKey: wrong }).stream('您好', VOICE, { sampleRate: 8000 }));
    expect(denied.kind).toBe('auth');
    expect(denied.message).toBe('语音合成服务拒绝了 API Key（HTTP 401），请检查语音配置中的 API Key');
    expect(inspect(denied)).not.toContain(wrong);

    const missing = await failure(
      synthesizer({ model: 'tts-9' }).stream('您好', VOICE, { sampleRate: 8000 }),
    );
    expect(missing.kind).toBe('not_found');
    expect(missing.message).toContain('语音合成服务找不到该接口或模型（HTTP 404），请检查接口地址与模型名称');

    server.requests.length = 0;
    server.behave(() => ({ status: 503 }));
    const down = await failure(synthesizer().stream('您好', VOICE, { sampleRate: 8000 }));
    expect(down.kind).toBe('upstream');
    expect(down.message).toBe('语音合成服务暂时不可用（HTTP 503），请稍后再试');
    expect(server.requests).toHaveLength(1);

    const unreachable = await failure(
      synthesizer({ baseUrl: 'http://127.0.0.1:9/v1' }).stream('您好', VOICE, { sampleRate: 8000 }),
    );
    expect(unreachable.kind).toBe('network');
  });

  it('answers 429 past the server’s concurrency, as a rate-limit error', async () => {
    const busy = await startOpenAISpeechServer({ maxConcurrent: 1, msPerChar: MS_PER_CHAR });
    try {
      busy.behave((_, index) => (index === 0 ? { firstAudioDelayMs: 2000 } : {}));
      const local = createOpenAISynthesizer({ baseUrl: busy.baseUrl, apiKey: '', model: MODEL });
      const first = new AbortController();
      const slow = collectSynthesis(local.stream('您好', VOICE, { sampleRate: 8000, signal: first.signal }));
      await busy.received(1);
      const limited = await failure(local.stream('您好', VOICE, { sampleRate: 8000 }));
      expect(limited.kind).toBe('rate_limit');
      expect(limited.message).toBe('语音合成服务请求过于频繁或额度不足（HTTP 429），请稍后再试');
      first.abort();
      expect(await slow).toHaveLength(0);
    } finally {
      await busy.close();
    }
  });

  it('refuses a JSON answer and a compressed one with a message saying what to check', async () => {
    server.behave(() => ({ jsonBody: { text: '您好' } }));
    const json = await failure(synthesizer().stream('您好', VOICE, { sampleRate: 8000 }));
    expect(json.message).toBe(
      '语音合成服务的应答不是音频，请确认接口地址指向 OpenAI 兼容的 /audio/speech 接口',
    );
    // A server that ignores response_format and answers MP3: a phone line cannot play it.
    server.behave(() => ({
      raw: {
        contentType: 'audio/mpeg',
        bytes: Buffer.from('ID3\u0004\u0000\u0000\u0000\u0000\u0000\u0000mp3 frames'),
      },
    }));
    const mp3 = await failure(synthesizer().stream('您好', VOICE, { sampleRate: 8000 }));
    expect(mp3.kind).toBe('bad_request');
    expect(mp3.message).toBe(
      '语音合成服务返回了 MP3 音频，请确认该服务支持 pcm 或 wav 格式（response_format）',
    );
  });

  it('times out on its clock when no audio comes, and when audio stops mid-sentence', async () => {
    const clock = new VirtualClock();
    server.behave(() => ({ hang: true }));
    let settled = false;
    const pending = collectSynthesis(
      synthesizer({ clock, timeoutMs: 1500 }).stream('您好', VOICE, { sampleRate: 8000 }),
    );
    const settle = () => {
      settled = true;
    };
    pending.then(settle, settle);
    await server.received(1);
    await clock.advance(1499);
    expect(settled).toBe(false);
    await clock.advance(1);
    const silent = await failure(pending);
    expect(silent.kind).toBe('timeout');
    expect(silent.message).toBe('语音合成服务响应超时（超过 2 秒），请稍后再试');

    server.behave(() => ({ stallAfterFrames: 1, frameBytes: 1920 }));
    const stream = synthesizer({ clock, timeoutMs: 1500 })
      .stream('您好，请问是张先生吗', VOICE, { sampleRate: 8000 })
      [Symbol.asyncIterator]();
    expect((await stream.next()).value?.length).toBeGreaterThan(0);
    const next = stream.next();
    let stalled = false;
    next.then(
      () => {
        stalled = true;
      },
      () => {
        stalled = true;
      },
    );
    await clock.advance(1499);
    expect(stalled).toBe(false);
    await clock.advance(1);
    const err = await next.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).kind).toBe('timeout');
  });

  it('ends quietly on abort (barge-in) and closes the connection; a consumer breaking off closes it too', async () => {
    server.behave(() => ({ frameIntervalMs: 30, frameBytes: 960 }));
    const bargeIn = new AbortController();
    const stream = synthesizer()
      .stream('您好，我们最近推出了新的宽带套餐，请问您有兴趣了解一下吗', VOICE, {
        sampleRate: 8000,
        signal: bargeIn.signal,
      })
      [Symbol.asyncIterator]();
    expect((await stream.next()).done).toBe(false);
    bargeIn.abort(new Error('caller spoke'));
    let rest = 0;
    for (let step = await stream.next(); !step.done; step = await stream.next()) rest++;
    expect(rest).toBeLessThan(3);
    await vi.waitFor(() => expect(server.requests[0]?.closedEarly).toBe(true));

    for await (const _ of synthesizer().stream('您好，我们最近推出了新的宽带套餐', VOICE, {
      sampleRate: 8000,
    })) {
      break;
    }
    await vi.waitFor(() => expect(server.requests[1]?.closedEarly).toBe(true));
  });

  it('reports a connection dropped mid-sentence as a network failure', async () => {
    server.behave(() => ({ dropAfterFrames: 2, frameBytes: 960, frameIntervalMs: 5 }));
    const chunks: Int16Array[] = [];
    const err = await (async () => {
      try {
        for await (const chunk of synthesizer().stream('您好，请问是张先生吗', VOICE, { sampleRate: 8000 })) {
          chunks.push(chunk);
        }
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(chunks.length).toBeGreaterThan(0);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).kind).toBe('network');
    expect((err as ProviderError).message).toBe('语音合成服务在合成途中断开了连接，请稍后再试');
  });
});
