import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../brain/openai-client';
import { VirtualClock } from '../clock';
import { type FakeTranscriptionServer, startFakeTranscriptionServer } from './fake-transcription-server';
import { createOpenAITranscriber } from './openai-transcriber';
import { createRecognizer } from './recognizer';
import type { TelephonyUtterance } from './types';
import { encodeWav } from './wav';

const API_KEY = 'sk-asr-live-abcdefghijklmnop9876';
const MODEL = 'whisper-1';

/** A 440 Hz tone of `ms` at 8 kHz: distinct samples, so a reordered or cut upload is visible. */
function tone(ms: number): TelephonyUtterance {
  const pcm = new Int16Array((ms * 8000) / 1000);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return { pcm, sampleRate: 8000 };
}

let server: FakeTranscriptionServer;

beforeAll(async () => {
  server = await startFakeTranscriptionServer({ apiKey: API_KEY, model: MODEL });
});
afterAll(() => server.close());
afterEach(() => {
  server.requests.length = 0;
  server.hear(() => '');
});

const transcriber = (over: Partial<Parameters<typeof createOpenAITranscriber>[0]> = {}) =>
  createOpenAITranscriber({ baseUrl: server.baseUrl, apiKey: API_KEY, model: MODEL, ...over });

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the transcription to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  const provider = err as ProviderError;
  expect(provider.service).toBe('speech_recognition');
  // Whatever the runtime or a log does with the error, the key is not in it.
  expect(inspect(provider, { depth: 5 })).not.toContain(API_KEY);
  expect(JSON.stringify(provider)).not.toContain(API_KEY);
  return provider;
}

describe('OpenAI-compatible transcriber', () => {
  it('sends the utterance as an 8 kHz WAV with the key, model, language and hotwords, and returns the text', async () => {
    server.hear((heard) => (heard.durationMs === 1200 ? ' 我想了解一下宽带套餐 ' : '听错了'));
    const utterance = tone(1200);
    const transcript = await transcriber().transcribe(utterance, { language: 'zh', prompt: '宽带 套餐' });

    expect(transcript).toEqual({ text: '我想了解一下宽带套餐', durationMs: 1200 });
    const [request] = server.requests;
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.fields).toMatchObject({
      model: MODEL,
      language: 'zh',
      prompt: '宽带 套餐',
      response_format: 'json',
    });
    expect(request?.utterance).toMatchObject({ sampleRate: 8000, channels: 1, fileName: 'utterance.wav' });
    expect(request?.utterance?.pcm).toEqual(utterance.pcm);
  });

  it('asks nothing for an empty utterance, and leaves the prompt out when there are no hotwords', async () => {
    const recognizer = transcriber();
    expect(
      await recognizer.transcribe({ pcm: new Int16Array(0), sampleRate: 8000 }, { language: 'zh' }),
    ).toEqual({
      text: '',
      durationMs: 0,
    });
    expect(server.requests).toHaveLength(0);
    await recognizer.transcribe(tone(100), { language: 'zh' });
    expect(server.requests[0]?.fields).not.toHaveProperty('prompt');
  });

  it('maps a refused key to a Chinese auth error that does not carry the key', async () => {
    const err = await failure(
      transcriber({ apiKey: 'sk-wrong-key-000000000000' }).transcribe(tone(200), { language: 'zh' }),
    );
    expect(err.kind).toBe('auth');
    expect(err.message).toBe('语音识别服务拒绝了 API Key（HTTP 401），请检查语音识别配置中的 API Key');
    expect(inspect(err)).not.toContain('sk-wrong-key-000000000000');
  });

  it('maps an unknown model, a server error and an unreachable endpoint, without retrying', async () => {
    const missing = await failure(
      transcriber({ model: 'no-such-model' }).transcribe(tone(200), { language: 'zh' }),
    );
    expect(missing.kind).toBe('not_found');
    expect(missing.message).toContain('语音识别服务找不到该接口或模型（HTTP 404），请检查接口地址与模型名称');

    server.requests.length = 0;
    server.hear(() => ({ status: 500 }));
    const down = await failure(transcriber().transcribe(tone(200), { language: 'zh' }));
    expect(down.kind).toBe('upstream');
    expect(down.message).toBe('语音识别服务暂时不可用（HTTP 500），请稍后再试');
    // The caller is waiting in silence: one attempt, then the leg decides.
    expect(server.requests).toHaveLength(1);

    const unreachable = await failure(
      transcriber({ baseUrl: 'http://127.0.0.1:9/v1' }).transcribe(tone(200), { language: 'zh' }),
    );
    expect(unreachable.kind).toBe('network');
    expect(unreachable.message).toBe('无法连接语音识别服务，请检查接口地址是否正确、服务是否已启动');
  });

  it('maps malformed JSON and an answer without text to a format error', async () => {
    server.hear(() => ({ rawBody: '{"text": "您好' }));
    const malformed = await failure(transcriber().transcribe(tone(200), { language: 'zh' }));
    expect(malformed.kind).toBe('bad_request');
    expect(malformed.message).toBe('语音识别服务的应答格式不正确，请确认接口地址指向 OpenAI 兼容的接口');

    server.hear(() => ({ rawBody: '{"result": "您好"}' }));
    const textless = await failure(transcriber().transcribe(tone(200), { language: 'zh' }));
    expect(textless.message).toContain('应答中没有识别文本');
  });

  it('gives up after the timeout on its clock, not before', async () => {
    const clock = new VirtualClock();
    server.hear(() => ({ hang: true }));
    let settled = false;
    const pending = transcriber({ clock, timeoutMs: 3000 }).transcribe(tone(200), { language: 'zh' });
    const settle = () => {
      settled = true;
    };
    pending.then(settle, settle);
    await server.received(1);
    await clock.advance(2999);
    expect(settled).toBe(false);
    await clock.advance(1);
    const err = await failure(pending);
    expect(err.kind).toBe('timeout');
    expect(err.message).toBe('语音识别服务响应超时（超过 3 秒），请稍后再试');
  });

  it('stops waiting when the caller aborts (hang-up), rejecting with the signal’s reason', async () => {
    server.hear(() => ({ hang: true }));
    const hangUp = new AbortController();
    const pending = transcriber().transcribe(tone(200), { language: 'zh', signal: hangUp.signal });
    await server.received(1);
    const reason = new Error('caller hung up');
    hangUp.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await expect(transcriber().transcribe(tone(200), { language: 'zh', signal: hangUp.signal })).rejects.toBe(
      reason,
    );
  });

  it('is what createRecognizer builds for an openai_compatible profile', async () => {
    server.hear(() => '好的');
    const recognizer = createRecognizer({
      vendor: 'openai_compatible',
      baseUrl: server.baseUrl,
      apiKey: API_KEY,
      model: MODEL,
      appId: '',
      keyId: '',
    });
    expect((await recognizer.transcribe(tone(200), { language: 'zh' })).text).toBe('好的');
  });
});

describe('fake transcription server', () => {
  const post = (form: FormData, key = API_KEY) =>
    fetch(`${server.baseUrl}/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
  const form = (fields: Record<string, string>, file?: Buffer) => {
    const body = new FormData();
    for (const [name, value] of Object.entries(fields)) body.append(name, value);
    if (file) body.append('file', new Blob([new Uint8Array(file)], { type: 'audio/wav' }), 'a.wav');
    return body;
  };

  it('refuses what a strict provider refuses: a cut WAV, no file, no model, a wrong key', async () => {
    const wav = encodeWav(tone(200).pcm, 8000);
    const cut = await post(form({ model: MODEL }, wav.subarray(0, wav.length - 100)));
    expect(cut.status).toBe(400);
    expect(((await cut.json()) as { error: { message: string } }).error.message).toContain('truncated');
    expect((await post(form({ model: MODEL }, Buffer.from('not a wav')))).status).toBe(400);
    expect((await post(form({ model: MODEL }))).status).toBe(400);
    expect((await post(form({}, wav))).status).toBe(400);
    expect((await post(form({ model: MODEL }, wav), 'sk-other')).status).toBe(401);
    const ok = await post(form({ model: MODEL, response_format: 'text' }, wav));
    expect(ok.status).toBe(200);
    expect(server.requests.map((request) => request.status)).toEqual([400, 400, 400, 400, 401, 200]);
  });
});
