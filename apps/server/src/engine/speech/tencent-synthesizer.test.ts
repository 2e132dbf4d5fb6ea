import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ProviderError } from '../brain/openai-client';
import { collectSynthesis, type SynthesisVoice } from './synthesis';
import {
  createTencentSynthesizer,
  type TencentSynthesizerOptions,
  tencentSpeed,
  tencentSynthesisUrl,
  tencentVolume,
} from './tencent-synthesizer';
import { fakeSpeech } from './testing/fake-speech';
import { startTencentTtsServer, type TencentTtsServer } from './testing/tencent-tts-server';

const APP_ID = '1300000001';
const SECRET_ID = 'AKIDsynthesisSecretId0001';
const SECRET_KEY = 'tencentTtsSecretKey-5a4b3c2d1e';
const MS_PER_CHAR = 30;
const VOICE: SynthesisVoice = { voiceId: '101001', speed: 1, volume: 80 };
const SENTENCE = '您的宽带已经恢复，请重启路由器。';
const CHARS = [...SENTENCE].length;

let server: TencentTtsServer;
beforeAll(async () => {
  server = await startTencentTtsServer({
    appId: APP_ID,
    secretId: SECRET_ID,
    secretKey: SECRET_KEY,
    msPerChar: MS_PER_CHAR,
  });
});
afterAll(() => server.close());
afterEach(() => {
  server.fault(null);
  server.tune({ frameIntervalMs: 2, firstAudioDelayMs: 0, oddFrames: false });
});

const synthesizer = (over: Partial<TencentSynthesizerOptions> = {}, on = server) =>
  createTencentSynthesizer({
    appId: APP_ID,
    secretId: SECRET_ID,
    secretKey: SECRET_KEY,
    host: on.url,
    timeoutMs: 3_000,
    ...over,
  });

/** The failure a synthesis ends with; it must be a speech_synthesis ProviderError that leaks nothing. */
async function failure(
  chunks: AsyncIterable<Int16Array>,
  received: Int16Array[] = [],
): Promise<ProviderError> {
  const err = await (async () => {
    for await (const chunk of chunks) received.push(chunk);
  })().then(
    () => {
      throw new Error('expected the synthesis to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  const provider = err as ProviderError;
  expect(provider.service).toBe('speech_synthesis');
  expect(inspect(provider, { depth: 5 })).not.toContain(SECRET_KEY);
  expect(provider.message).not.toContain(SECRET_KEY);
  return provider;
}

describe('Tencent streaming synthesis: the request', () => {
  it('signs the URL as Tencent’s SDKs do: GET + host + path + sorted raw parameters, values encoded only in the URL', () => {
    const params = {
      Action: 'TextToStreamAudioWS',
      AppId: APP_ID,
      SecretId: SECRET_ID,
      Timestamp: '1700000000',
      Expired: '1700086400',
      SessionId: 'session-1',
      Text: '你好 世界&再见',
      VoiceType: '101001',
    };
    const url = new URL(tencentSynthesisUrl('wss://tts.cloud.tencent.com', params, SECRET_KEY));
    const raw =
      'Action=TextToStreamAudioWS&AppId=1300000001&Expired=1700086400&SecretId=AKIDsynthesisSecretId0001' +
      '&SessionId=session-1&Text=你好 世界&再见&Timestamp=1700000000&VoiceType=101001';
    const expected = createHmac('sha1', SECRET_KEY)
      .update(`GETtts.cloud.tencent.com/stream_ws?${raw}`)
      .digest('base64');
    expect(url.origin + url.pathname).toBe('wss://tts.cloud.tencent.com/stream_ws');
    expect(url.searchParams.get('Signature')).toBe(expected);
    expect(url.searchParams.get('Text')).toBe('你好 世界&再见');
    expect(url.search).toContain(`Text=${encodeURIComponent('你好 世界&再见')}`);
    expect(url.search).not.toContain(SECRET_KEY);
  });

  it('streams the sentence as 16 kHz PCM, in order, and closes after final', async () => {
    const before = server.connections.length;
    const pcm = await collectSynthesis(synthesizer().stream(SENTENCE, VOICE, { sampleRate: 16000 }));

    expect(pcm).toEqual(fakeSpeech(SENTENCE, 16000, MS_PER_CHAR));
    expect(pcm.length).toBe(CHARS * 30 * 16);
    const connection = server.connections[before];
    await connection?.closed;
    expect(connection?.handshakeCode).toBe(0);
    expect(connection?.params).toMatchObject({
      Action: 'TextToStreamAudioWS',
      AppId: APP_ID,
      SecretId: SECRET_ID,
      Text: SENTENCE,
      VoiceType: '101001',
      Codec: 'pcm',
      SampleRate: '16000',
      Speed: '0',
      Volume: '6',
      ModelType: '1',
    });
    expect(connection?.params.SessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(connection?.params.Expired) - Number(connection?.params.Timestamp)).toBe(86_400);
    expect(connection?.sent.at(-1)).toMatchObject({ code: 0, final: 1 });
    // Tencent asks the client to close after final: it did, and did not linger.
    expect(connection?.closedBy).toBe('client');
    expect(connection?.lingered).toBe(false);
  });

  it('hands out the first audio while Tencent is still sending the rest', async () => {
    server.tune({ frameIntervalMs: 15 });
    const before = server.connections.length;
    const chunks: Int16Array[] = [];
    let sentAtFirstChunk = -1;
    for await (const chunk of synthesizer().stream(SENTENCE, VOICE, { sampleRate: 8000 })) {
      if (chunks.length === 0) sentAtFirstChunk = server.connections[before]?.framesSent ?? -1;
      chunks.push(chunk);
    }
    const total = server.connections[before]?.framesTotal ?? 0;
    expect(total).toBeGreaterThan(5);
    expect(sentAtFirstChunk).toBeGreaterThan(0);
    expect(sentAtFirstChunk).toBeLessThan(total);
    const joined = await collectSynthesis(
      (async function* () {
        yield* chunks;
      })(),
    );
    expect(joined).toEqual(fakeSpeech(SENTENCE, 8000, MS_PER_CHAR));
    expect(joined.length).toBe(CHARS * 30 * 8);
  });

  it('joins samples Tencent split across frames', async () => {
    server.tune({ oddFrames: true });
    const pcm = await collectSynthesis(
      synthesizer().stream('好的，马上为您处理。', VOICE, { sampleRate: 8000 }),
    );
    expect(pcm).toEqual(fakeSpeech('好的，马上为您处理。', 8000, MS_PER_CHAR));
  });

  it('asks for nothing when there is nothing to say', async () => {
    const before = server.connections.length;
    expect(await collectSynthesis(synthesizer().stream(' ', VOICE, { sampleRate: 8000 }))).toHaveLength(0);
    expect(server.connections.length).toBe(before);
  });
});

describe('Tencent streaming synthesis: voice settings', () => {
  it('maps speed 0.5-2 onto Speed through the documented points and volume 0-100 onto -10..10', () => {
    expect(tencentSpeed(0.5)).toBe(-2);
    expect(tencentSpeed(0.6)).toBe(-2);
    expect(tencentSpeed(0.7)).toBe(-1.5);
    expect(tencentSpeed(0.8)).toBe(-1);
    expect(tencentSpeed(1)).toBe(0);
    expect(tencentSpeed(1.1)).toBe(0.5);
    expect(tencentSpeed(1.2)).toBe(1);
    expect(tencentSpeed(1.5)).toBe(2);
    expect(tencentSpeed(2)).toBe(4);
    expect(tencentSpeed(Number.NaN)).toBe(0);
    expect(tencentVolume(50)).toBe(0);
    expect(tencentVolume(0)).toBe(-10);
    expect(tencentVolume(100)).toBe(10);
    expect(tencentVolume(80)).toBe(6);
    expect(tencentVolume(250)).toBe(10);
  });

  it('sends the voice, speed, volume and sample rate the assistant asked for', async () => {
    const before = server.connections.length;
    const pcm = await collectSynthesis(
      synthesizer().stream('好的。', { voiceId: '101008', speed: 2, volume: 0 }, { sampleRate: 8000 }),
    );
    expect(pcm.length).toBe(3 * 30 * 8);
    expect(server.connections[before]?.params).toMatchObject({
      VoiceType: '101008',
      Speed: '4',
      Volume: '-10',
      SampleRate: '8000',
      Codec: 'pcm',
    });
  });

  it('refuses a voice that is not a Tencent voice id before connecting', async () => {
    const before = server.connections.length;
    const err = await failure(
      synthesizer().stream(SENTENCE, { ...VOICE, voiceId: 'xiaoyun' }, { sampleRate: 8000 }),
    );
    expect(err.kind).toBe('bad_request');
    expect(err.message).toContain('音色');
    expect(server.connections.length).toBe(before);
  });
});

describe('Tencent streaming synthesis: keys', () => {
  it('says the keys in 语音配置 are wrong for a wrong SecretKey, and never shows it', async () => {
    const err = await failure(
      synthesizer({ secretKey: 'not-the-secret-key-000' }).stream(SENTENCE, VOICE, { sampleRate: 8000 }),
    );
    expect(err.kind).toBe('auth');
    expect(err.message).toContain('4002');
    expect(err.message).toContain('语音配置');
    expect(err.message).toContain('SecretKey');
    expect(err.message).not.toContain('not-the-secret-key-000');
    expect(server.connections.at(-1)?.handshakeCode).toBe(4002);
  });

  it('refuses a wrong AppID the same way', async () => {
    const err = await failure(
      synthesizer({ appId: '1300000002' }).stream(SENTENCE, VOICE, { sampleRate: 8000 }),
    );
    expect(err.kind).toBe('auth');
    expect(err.message).toContain('AppID');
  });

  it('names the missing or malformed field before connecting', async () => {
    const before = server.connections.length;
    const missing = await failure(
      synthesizer({ secretKey: '' }).stream(SENTENCE, VOICE, { sampleRate: 8000 }),
    );
    expect(missing.kind).toBe('auth');
    expect(missing.message).toContain('SecretKey');
    const letters = await failure(
      synthesizer({ appId: 'abc' }).stream(SENTENCE, VOICE, { sampleRate: 8000 }),
    );
    expect(letters.message).toContain('AppID 应为数字');
    expect(server.connections.length).toBe(before);
  });

  it('says so when the address is not Tencent’s synthesis endpoint', async () => {
    const err = await failure(
      synthesizer({ host: `${server.url}/v2` }).stream(SENTENCE, VOICE, { sampleRate: 8000 }),
    );
    expect(err.kind).toBe('not_found');
    expect(err.message).toContain('接口地址');
  });
});

describe('Tencent streaming synthesis: failures', () => {
  it('times out when no audio comes, and closes the connection', async () => {
    server.tune({ firstAudioDelayMs: 10_000 });
    const before = server.connections.length;
    const err = await failure(synthesizer({ timeoutMs: 300 }).stream(SENTENCE, VOICE, { sampleRate: 8000 }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toContain('语音合成服务响应超时');
    await server.connections[before]?.closed;
    expect(server.connections[before]?.closedBy).toBe('client');
  });

  it('reports an error frame in the middle of the audio as an upstream failure, after the audio before it', async () => {
    server.fault({ afterFrames: 4, code: 10001, message: '合成引擎内部错误' });
    const received: Int16Array[] = [];
    const err = await failure(synthesizer().stream(SENTENCE, VOICE, { sampleRate: 8000 }), received);
    expect(err.kind).toBe('upstream');
    expect(err.message).toContain('10001');
    expect(received.reduce((n, c) => n + c.length, 0)).toBe(4 * 20 * 8);
  });

  it('reports a dropped connection as a network failure', async () => {
    server.fault({ afterFrames: 2 });
    const err = await failure(synthesizer().stream(SENTENCE, VOICE, { sampleRate: 8000 }));
    expect(err.kind).toBe('network');
    expect(err.message).toContain('连接意外断开');
  });

  it('explains the idle rule when Tencent enforces it', async () => {
    server.fault({ afterFrames: 1, code: 4008, message: '客户端长时间未收发数据' });
    const err = await failure(synthesizer().stream(SENTENCE, VOICE, { sampleRate: 8000 }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toContain('4008');
  });

  it('reports the account concurrency limit as a rate limit while the first sentence still plays', async () => {
    const strict = await startTencentTtsServer({
      appId: APP_ID,
      secretId: SECRET_ID,
      secretKey: SECRET_KEY,
      msPerChar: MS_PER_CHAR,
      maxConcurrent: 1,
      firstAudioDelayMs: 400,
    });
    try {
      const synth = synthesizer({}, strict);
      const first = collectSynthesis(synth.stream(SENTENCE, VOICE, { sampleRate: 8000 }));
      while (strict.connections[0]?.handshakeCode !== 0) await new Promise((r) => setTimeout(r, 5));
      const err = await failure(synth.stream('第二路。', VOICE, { sampleRate: 8000 }));
      expect(err.kind).toBe('rate_limit');
      expect(err.message).toContain('4006');
      expect(await first).toEqual(fakeSpeech(SENTENCE, 8000, MS_PER_CHAR));
      // The slot is free again once the first connection closed.
      await strict.connections[0]?.closed;
      const third = await collectSynthesis(synth.stream('第三路。', VOICE, { sampleRate: 8000 }));
      expect(third.length).toBe(4 * 30 * 8);
    } finally {
      await strict.close();
    }
  });

  it('the fake cuts a client that keeps the socket after final (the rule the synthesiser follows)', async () => {
    const strict = await startTencentTtsServer({
      appId: APP_ID,
      secretId: SECRET_ID,
      secretKey: SECRET_KEY,
      idleTimeoutMs: 150,
    });
    try {
      const timestamp = Math.floor(Date.now() / 1000);
      const url = tencentSynthesisUrl(
        strict.url,
        {
          Action: 'TextToStreamAudioWS',
          AppId: APP_ID,
          SecretId: SECRET_ID,
          Timestamp: String(timestamp),
          Expired: String(timestamp + 60),
          SessionId: 'lingering-client',
          Text: '你好。',
          VoiceType: '101001',
          Codec: 'pcm',
          SampleRate: '8000',
        },
        SECRET_KEY,
      );
      const ws = new WebSocket(url);
      const texts: Record<string, unknown>[] = [];
      ws.on('message', (data, isBinary) => {
        if (!isBinary) texts.push(JSON.parse(data.toString()) as Record<string, unknown>);
      });
      await new Promise((resolve) => ws.once('close', resolve));
      expect(texts.at(-1)).toMatchObject({ final: 1 });
      expect(strict.connections[0]?.lingered).toBe(true);
      expect(strict.connections[0]?.closedBy).toBe('server');
    } finally {
      await strict.close();
    }
  });
});

describe('Tencent streaming synthesis: barge-in', () => {
  it('stops at once when aborted: no error, no more audio, the connection closed', async () => {
    server.tune({ frameIntervalMs: 20 });
    const before = server.connections.length;
    const controller = new AbortController();
    const chunks: Int16Array[] = [];
    for await (const chunk of synthesizer().stream(SENTENCE, VOICE, {
      sampleRate: 8000,
      signal: controller.signal,
    })) {
      chunks.push(chunk);
      if (chunks.length === 2) controller.abort();
    }
    expect(chunks).toHaveLength(2);
    const connection = server.connections[before];
    await connection?.closed;
    expect(connection?.closedBy).toBe('client');
    expect(connection?.framesSent).toBeLessThan(connection?.framesTotal ?? 0);
  });

  it('closes the connection when the caller leaves the loop', async () => {
    server.tune({ frameIntervalMs: 20 });
    const before = server.connections.length;
    for await (const _ of synthesizer().stream(SENTENCE, VOICE, { sampleRate: 8000 })) break;
    const connection = server.connections[before];
    await connection?.closed;
    expect(connection?.closedBy).toBe('client');
    expect(connection?.framesSent).toBeLessThan(connection?.framesTotal ?? 0);
  });

  it('does not connect for a signal aborted before the start', async () => {
    const before = server.connections.length;
    const pcm = await collectSynthesis(
      synthesizer().stream(SENTENCE, VOICE, { sampleRate: 8000, signal: AbortSignal.abort() }),
    );
    expect(pcm).toHaveLength(0);
    expect(server.connections.length).toBe(before);
  });
});
