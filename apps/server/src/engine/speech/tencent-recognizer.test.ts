import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { ProviderError } from '../brain/openai-client';
import { VirtualClock } from '../clock';
import {
  createTencentRecognizer,
  TENCENT_PACKET_BYTES,
  type TencentRecognizerOptions,
  tencentHotwordList,
  tencentRecognitionUrl,
} from './tencent-recognizer';
import {
  startTencentAsrServer,
  type TencentAsrConnection,
  type TencentAsrServer,
} from './testing/tencent-asr-server';
import type { TelephonyUtterance } from './types';

const APP_ID = '1300012345';
const SECRET_ID = 'AKIDz8krbsJ5yKBZQpn74WFkmLPx3gnPhESA';
const SECRET_KEY = 'Gu5t9xGARNpq86cd98joQYCN3Cozk1qA';

/** A 440 Hz tone of `ms` at 8 kHz: distinct samples, so a reordered or cut upload is visible. */
function tone(ms: number): TelephonyUtterance {
  const pcm = new Int16Array((ms * 8000) / 1000);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return { pcm, sampleRate: 8000 };
}

const energy = (pcm: Int16Array) =>
  Math.sqrt(pcm.reduce((sum, s) => sum + s * s, 0) / Math.max(1, pcm.length));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean) {
  while (!condition()) await sleep(5);
}

let server: TencentAsrServer;

beforeAll(async () => {
  server = await startTencentAsrServer({ appId: APP_ID, secretId: SECRET_ID, secretKey: SECRET_KEY });
});
afterAll(() => server.close());
afterEach(() => {
  server.hear(() => '');
  server.fault(null);
  server.stall(null);
});

const recognizer = (over: Partial<TencentRecognizerOptions> = {}, url = server.url) =>
  createTencentRecognizer({ appId: APP_ID, secretId: SECRET_ID, secretKey: SECRET_KEY, host: url, ...over });

/** The connection the next recognition opens on `on`. */
function nextConnection(on: TencentAsrServer = server): Promise<TencentAsrConnection> {
  const index = on.connections.length;
  return on.connected(index + 1).then(() => on.connections[index] as TencentAsrConnection);
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the recognition to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  const provider = err as ProviderError;
  expect(provider.service).toBe('speech_recognition');
  // Whatever the runtime or a log does with the error, the key is not in it.
  expect(inspect(provider, { depth: 5 })).not.toContain(SECRET_KEY);
  expect(JSON.stringify(provider)).not.toContain(SECRET_KEY);
  return provider;
}

describe('Tencent Cloud real-time ASR', () => {
  it('signs the URL exactly as the documentation’s worked example', () => {
    const url = tencentRecognitionUrl(
      'wss://asr.cloud.tencent.com',
      '1259228442',
      {
        engine_model_type: '16k_zh',
        expired: '1592380492',
        filter_dirty: '1',
        filter_modal: '1',
        filter_punc: '1',
        needvad: '1',
        nonce: '1592294092123',
        secretid: 'AKIDoQq1zhZMN8dv0psmvud6OUKuGPO7pu0r',
        timestamp: '1592294092',
        voice_format: '1',
        voice_id: 'RnKu9FODFHK5FPpsrN',
      },
      'kFpwoX5RYQ2SkqpeHgqmSzHK7h3A2fni',
    );
    expect(url).toBe(
      'wss://asr.cloud.tencent.com/asr/v2/1259228442?engine_model_type=16k_zh&expired=1592380492&filter_dirty=1' +
        '&filter_modal=1&filter_punc=1&needvad=1&nonce=1592294092123&secretid=AKIDoQq1zhZMN8dv0psmvud6OUKuGPO7pu0r' +
        '&timestamp=1592294092&voice_format=1&voice_id=RnKu9FODFHK5FPpsrN&signature=HepdTRX6u155qIPKNKC%2B3U0j1N0%3D',
    );
  });

  it('transcribes an utterance over a signed 8k_zh stream in 40 ms PCM packets', async () => {
    server.hear(({ pcm }) => (energy(pcm) > 1000 ? '我想了解一下宽带套餐。' : ''));
    const utterance = tone(1200);
    const opened = nextConnection();
    const transcript = await recognizer().transcribe(utterance, { language: 'zh' });
    const connection = await opened;

    expect(transcript).toEqual({ text: '我想了解一下宽带套餐。', durationMs: 1200 });
    expect(connection.handshakeCode).toBe(0);
    expect(connection.params).toMatchObject({
      engine_model_type: '8k_zh',
      voice_format: '1',
      needvad: '1',
      secretid: SECRET_ID,
    });
    expect(connection.params.voice_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(connection.pcm).toEqual(utterance.pcm);
    expect(connection.packets).toEqual(Array(30).fill(TENCENT_PACKET_BYTES));
    expect(connection.ended).toBe(true);
    expect(connection.errors).toEqual([]);

    // Nothing to hear: no connection, nothing billed.
    const before = server.connections.length;
    expect(
      await recognizer().transcribe({ pcm: new Int16Array(0), sampleRate: 8000 }, { language: 'zh' }),
    ).toEqual({ text: '', durationMs: 0 });
    expect(server.connections).toHaveLength(before);
  });

  it('streams a session: partial text while the caller speaks, then every sentence in the final', async () => {
    server.hear(({ durationMs }) => {
      if (durationMs < 200) return '';
      if (durationMs < 600) return ['你好'];
      if (durationMs < 800) return ['你好。', '我想'];
      return ['你好。', '我想问一下套餐。'];
    });
    const opened = nextConnection();
    const session = recognizer().openSession?.({ language: 'zh' });
    if (!session) throw new Error('the Tencent recogniser streams');
    const partials: string[] = [];
    session.onPartial((text) => partials.push(text));

    // The media loop's pace: one 20 ms frame per tick.
    const speech = tone(1000).pcm;
    for (let at = 0; at < speech.length; at += 160) {
      session.write(speech.subarray(at, at + 160));
      await sleep(20);
    }
    const heardWhileSpeaking = partials.length;
    const transcript = await session.finish();

    expect(heardWhileSpeaking).toBeGreaterThan(0);
    expect(partials).toEqual(['你好', '你好。', '你好。我想', '你好。我想问一下套餐。']);
    expect(transcript).toEqual({ text: '你好。我想问一下套餐。', durationMs: 1000 });
    const connection = await opened;
    expect(connection.pcm).toEqual(speech);
    const slices = connection.sent
      .map((message) => message.result as { slice_type: number; index: number } | undefined)
      .filter((result) => result !== undefined)
      .map((result) => `${result.index}:${result.slice_type}`);
    expect(slices).toEqual(['0:0', '0:2', '1:0', '1:1', '1:2']);
    expect(connection.sent.at(-1)).toMatchObject({ code: 0, final: 1 });
  });

  it('passes the profile’s and the assistant’s hotwords as hotword_list, in Tencent’s format', async () => {
    const opened = nextConnection();
    await recognizer({
      hotwords: ['智能外呼', { word: 'CallPilot', weight: 11 }, 'bad|word', { word: '套餐', weight: 0 }],
      hotwordId: 'c1a2b3',
    }).transcribe(tone(80), { language: 'zh', prompt: '宽带 套餐，智能外呼' });
    const connection = await opened;
    expect(connection.handshakeCode).toBe(0);
    expect(connection.params.hotword_list).toBe('智能外呼|10,CallPilot|11,套餐|10,宽带|10');
    expect(connection.hotwords).toEqual([
      { word: '智能外呼', weight: 10 },
      { word: 'CallPilot', weight: 11 },
      { word: '套餐', weight: 10 },
      { word: '宽带', weight: 10 },
    ]);
    expect(connection.params.hotword_id).toBe('c1a2b3');

    // Entries Tencent would refuse the whole request for stay out; no words, no parameter.
    const many = Array.from({ length: 200 }, (_, i) => `词${i}`);
    expect(tencentHotwordList(many)?.split(',')).toHaveLength(128);
    expect(tencentHotwordList(['一二三四五六七八九十一', 'a b', ''])).toBeUndefined();
    const plain = nextConnection();
    await recognizer().transcribe(tone(80), { language: 'zh' });
    expect((await plain).params).not.toHaveProperty('hotword_list');
  });

  it('refuses a wrong key with an auth error naming the profile, and no secret anywhere', async () => {
    const logged: unknown[] = [];
    const spies = (['log', 'info', 'warn', 'error', 'debug'] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void logged.push(...args)),
    );
    try {
      const wrongKey = 'Wr0ngSecretKeyWr0ngSecretKey1234';
      const opened = nextConnection();
      const err = await failure(
        recognizer({ secretKey: wrongKey }).transcribe(tone(200), { language: 'zh' }),
      );
      expect(err.kind).toBe('auth');
      expect(err.message).toBe(
        '腾讯云语音识别鉴权失败（4002），请检查语音识别配置中的 AppID、SecretId 和 SecretKey',
      );
      expect(inspect(err)).not.toContain(wrongKey);
      const connection = await opened;
      expect(connection.errors).toEqual([{ code: 4002, message: '鉴权失败' }]);
      // No audio goes out before the handshake is accepted.
      expect(connection.packets).toEqual([]);

      for (const over of [{ secretId: 'AKIDsomeoneElse000000000000000000000' }, { appId: '1300099999' }]) {
        expect((await failure(recognizer(over).transcribe(tone(200), { language: 'zh' }))).kind).toBe('auth');
      }
      expect(JSON.stringify(logged)).not.toContain(wrongKey);
      expect(JSON.stringify(logged)).not.toContain(SECRET_KEY);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('paces audio so the server never complains, where a client sending faster is cut off (4000)', async () => {
    // Tencent's rule scaled down (at most 1 s of audio in any 0.5 s) with the bucket to match.
    const strict = await startTencentAsrServer({
      appId: APP_ID,
      secretId: SECRET_ID,
      secretKey: SECRET_KEY,
      rate: { windowMs: 500, maxAudioMs: 1000 },
      hear: ({ pcm }) => (energy(pcm) > 1000 ? '请帮我查一下话费余额。' : ''),
    });
    try {
      const opened = nextConnection(strict);
      const transcript = await recognizer({ burstMs: 200 }, strict.url).transcribe(tone(1600), {
        language: 'zh',
      });
      const paced = await opened;
      expect(transcript.text).toBe('请帮我查一下话费余额。');
      expect(paced.errors).toEqual([]);
      expect(paced.peakWindowAudioMs).toBeLessThanOrEqual(1000);

      // The same audio at once, as an unpaced client would send it.
      const blasted = nextConnection(strict);
      const ws = new WebSocket(signedUrl(strict.url, {}));
      const replies: { code: number; message: string }[] = [];
      ws.on('message', (data) => {
        replies.push(JSON.parse(data.toString()));
        if (replies.length === 1) {
          const pcm = tone(1600).pcm;
          for (let at = 0; at < pcm.length; at += 320) ws.send(Buffer.from(pcm.buffer, at * 2, 640));
        }
      });
      const connection = await blasted;
      await connection.closed;
      expect(replies[0]).toMatchObject({ code: 0, message: 'success' });
      expect(replies.at(-1)).toMatchObject({
        code: 4000,
        message: '音频数据发送过多，请0.5秒内最多发送1秒音频数据',
      });
      expect(connection.closedBy).toBe('server');
    } finally {
      await strict.close();
    }
  });

  it('refuses a malformed hotword list and unknown text messages as Tencent does', async () => {
    const refused = nextConnection();
    const ws = new WebSocket(signedUrl(server.url, { hotword_list: '宽带' }));
    ws.on('error', () => {});
    const connection = await refused;
    await connection.closed;
    expect(connection.errors[0]).toMatchObject({ code: 4001 });

    const chatty = nextConnection();
    const other = new WebSocket(signedUrl(server.url, {}));
    other.on('message', () => other.send(JSON.stringify({ type: 'pause' })));
    const second = await chatty;
    await second.closed;
    expect(second.errors).toEqual([{ code: 4010, message: '客户端上传未知文本消息' }]);
  });

  it('reports a server that stopped hearing audio (4008) as a clear timeout', async () => {
    const idle = await startTencentAsrServer({
      appId: APP_ID,
      secretId: SECRET_ID,
      secretKey: SECRET_KEY,
      idleTimeoutMs: 150,
    });
    try {
      const opened = nextConnection(idle);
      const session = recognizer({}, idle.url).openSession?.({ language: 'zh' });
      if (!session) throw new Error('the Tencent recogniser streams');
      session.write(tone(200).pcm);
      const connection = await opened;
      await connection.closed;
      expect(connection.errors).toEqual([{ code: 4008, message: '客户端超过15秒未发送音频数据' }]);

      const err = await failure(session.finish());
      expect(err.kind).toBe('timeout');
      expect(err.message).toBe('腾讯云语音识别长时间未收到音频，已断开连接（4008）');
    } finally {
      await idle.close();
    }
  });

  it('fails mid-stream with the vendor’s error, its message cleared of the credentials', async () => {
    server.hear(({ pcm }) => (energy(pcm) > 1000 ? '我想' : ''));
    server.fault({ afterAudioMs: 400, code: 5001, message: '后台识别服务器识别失败，请重试' });
    const session = recognizer().openSession?.({ language: 'zh' });
    if (!session) throw new Error('the Tencent recogniser streams');
    const partials: string[] = [];
    session.onPartial((text) => partials.push(text));
    session.write(tone(1000).pcm);
    const down = await failure(session.finish());
    expect(down.kind).toBe('upstream');
    expect(down.message).toBe('腾讯云语音识别暂时不可用（5001），请稍后再试');
    expect(partials).toEqual(['我想']);

    server.fault({ afterAudioMs: 0, code: 4001, message: `secretid ${SECRET_ID} 与 ${SECRET_KEY} 不匹配` });
    const bad = await failure(recognizer().transcribe(tone(200), { language: 'zh' }));
    expect(bad.kind).toBe('bad_request');
    expect(bad.message).toContain('腾讯云语音识别拒绝了请求参数（4001）：secretid *** 与 *** 不匹配');
    expect(bad.message).not.toContain(SECRET_ID);
  });

  it('abort() closes the socket; a hang-up signal stops transcribe with its reason', async () => {
    const opened = nextConnection();
    const session = recognizer().openSession?.({ language: 'zh' });
    if (!session) throw new Error('the Tencent recogniser streams');
    session.write(tone(200).pcm);
    const connection = await opened;
    await until(() => connection.packets.length > 0);
    session.abort();
    await connection.closed;
    expect(connection.closedBy).toBe('client');
    expect(connection.ended).toBe(false);
    await expect(session.finish()).rejects.toMatchObject({ name: 'AbortError' });

    server.stall('final');
    const hangUp = new AbortController();
    const waiting = nextConnection();
    const pending = recognizer().transcribe(tone(200), { language: 'zh', signal: hangUp.signal });
    const stalled = await waiting;
    await stalled.endReceived;
    const reason = new Error('caller hung up');
    hangUp.abort(reason);
    await expect(pending).rejects.toBe(reason);
    await stalled.closed;
    expect(stalled.closedBy).toBe('client');
  });

  it('gives up on its own clock when the handshake or the final result never comes', async () => {
    const clock = new VirtualClock({ startAt: Date.now() });
    const slow = recognizer({ clock, timeoutMs: 3000 });

    for (const stage of ['handshake', 'final'] as const) {
      server.stall(stage);
      const opened = nextConnection();
      let settled = false;
      const pending = slow.transcribe(tone(200), { language: 'zh' });
      pending.then(
        () => {
          settled = true;
        },
        () => {
          settled = true;
        },
      );
      const connection = await opened;
      if (stage === 'final') await connection.endReceived;
      else await sleep(20);
      await clock.advance(2999);
      expect(settled).toBe(false);
      await clock.advance(1);
      const err = await failure(pending);
      expect(err.kind).toBe('timeout');
      expect(err.message).toBe('语音识别服务响应超时（超过 3 秒），请稍后再试');
      await connection.closed;
      expect(connection.closedBy).toBe('client');
    }
  });

  it('maps a refused upgrade and an unreachable endpoint', async () => {
    const gate = http.createServer((_req, res) => {
      res.writeHead(403);
      res.end();
    });
    await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = gate.address() as AddressInfo;
      const refused = await failure(
        recognizer({}, `ws://127.0.0.1:${port}`).transcribe(tone(200), { language: 'zh' }),
      );
      expect(refused.kind).toBe('auth');
      expect(refused.message).toBe(
        '腾讯云语音识别拒绝了连接（HTTP 403），请检查语音识别配置中的 AppID、SecretId 和 SecretKey',
      );
    } finally {
      await new Promise<void>((resolve) => gate.close(() => resolve()));
    }
    const unreachable = await failure(
      recognizer({}, 'ws://127.0.0.1:9').transcribe(tone(200), { language: 'zh' }),
    );
    expect(unreachable.kind).toBe('network');
    expect(unreachable.message).toBe('无法连接腾讯云语音识别服务，请检查接口地址是否正确、网络是否可用');
  });
});

/** A correctly signed URL for a hand-driven client, with `extra` parameters. */
function signedUrl(url: string, extra: Record<string, string>) {
  const timestamp = Math.floor(Date.now() / 1000);
  return tencentRecognitionUrl(
    url,
    APP_ID,
    {
      secretid: SECRET_ID,
      timestamp: String(timestamp),
      expired: String(timestamp + 600),
      nonce: '12345',
      engine_model_type: '8k_zh',
      voice_id: `raw-${Math.random().toString(36).slice(2)}`,
      voice_format: '1',
      ...extra,
    },
    SECRET_KEY,
  );
}
