import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ProviderError } from '../brain/openai-client';
import {
  type AliyunSynthesizerOptions,
  aliyunSpeechRate,
  aliyunVolume,
  createAliyunSynthesizer,
} from './aliyun-synthesizer';
import { AliyunTokenCache } from './aliyun-token';
import { collectSynthesis, type SynthesisVoice } from './synthesis';
import { type FakeAliyunNls, type NlsMessage, startFakeAliyunNls } from './testing/aliyun-nls-server';
import {
  type FakeAliyunTts,
  type FakeAliyunTtsOptions,
  startFakeAliyunTts,
} from './testing/aliyun-tts-server';
import { fakeSpeech } from './testing/fake-speech';

const AK_ID = 'LTAI5tSynthesisKeyId';
const AK_SECRET = 'ttsSecret-9f8e7d6c5b4a39281706';
const APP_KEY = 'appkeyCallPilotTts';
const HEX32 = /^[0-9a-f]{32}$/;
const MS_PER_CHAR = 30;
const VOICE: SynthesisVoice = { voiceId: 'xiaoyun', speed: 1, volume: 80 };
const SENTENCE = '您好，这里是宽带客服中心。';

let nls: FakeAliyunNls;
let tts: FakeAliyunTts;
beforeAll(async () => {
  nls = await startFakeAliyunNls({ accessKeys: { [AK_ID]: AK_SECRET }, appKey: APP_KEY });
  tts = await startFakeAliyunTts({ nls, appKey: APP_KEY, msPerChar: MS_PER_CHAR });
});
afterAll(async () => {
  await tts.close();
  await nls.close();
});
afterEach(() => {
  tts.fault(null);
  tts.tune({ frameIntervalMs: 2, firstAudioDelayMs: 0, oddFrames: false });
});

const synthesizer = (over: Partial<AliyunSynthesizerOptions> = {}, server = tts) =>
  createAliyunSynthesizer({
    appKey: APP_KEY,
    accessKeyId: AK_ID,
    accessKeySecret: AK_SECRET,
    gatewayUrl: server.gatewayUrl,
    tokenUrl: nls.tokenUrl,
    timeoutMs: 3_000,
    tokens: new AliyunTokenCache(),
    ...over,
  });

const directive = (messages: NlsMessage[], name: string) => messages.find((m) => m.header.name === name);

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
  const tokens = tts.sessions.map((s) => s.token);
  for (const secret of [AK_SECRET, ...tokens]) {
    expect(inspect(provider, { depth: 5 })).not.toContain(secret);
    expect(provider.message).not.toContain(secret);
  }
  return provider;
}

describe('Aliyun NLS streaming synthesis: the task', () => {
  it('runs StartSynthesis → RunSynthesis → StopSynthesis and yields the sentence as 16 kHz PCM, in order', async () => {
    const before = tts.sessions.length;
    const pcm = await collectSynthesis(synthesizer().stream(SENTENCE, VOICE, { sampleRate: 16000 }));

    expect(pcm).toEqual(fakeSpeech(SENTENCE, 16000, MS_PER_CHAR));
    // 13 characters × 30 ms at 16 kHz: what a caller would hear, at the rate asked for.
    expect(pcm.length).toBe(13 * 30 * 16);
    await tts.closedSessions(before + 1);
    const session = tts.sessions[before];
    expect(session?.tokenVia).toBe('header');
    expect(nls.tokenRequests.at(-1)?.token).toBe(session?.token);
    const received = session?.received ?? [];
    expect(received.map((m) => m.header.name)).toEqual(['StartSynthesis', 'RunSynthesis', 'StopSynthesis']);
    const start = directive(received, 'StartSynthesis');
    expect(start?.header).toMatchObject({ namespace: 'FlowingSpeechSynthesizer', appkey: APP_KEY });
    expect(start?.header.task_id).toMatch(HEX32);
    expect(start?.payload).toEqual({
      voice: 'xiaoyun',
      format: 'pcm',
      sample_rate: 16000,
      volume: 80,
      speech_rate: 0,
      pitch_rate: 0,
    });
    expect(directive(received, 'RunSynthesis')?.payload).toEqual({ text: SENTENCE });
    expect(directive(received, 'StopSynthesis')?.payload).toBeUndefined();
    const ids = received.map((m) => m.header.message_id);
    expect(new Set(ids).size).toBe(3);
    for (const m of received) expect(m.header.task_id).toBe(start?.header.task_id);
    // The client hung up after SynthesisCompleted, neither before nor never.
    expect(session?.clientLeftEarly).toBe(false);
    expect(session?.lingered).toBe(false);
    expect(session?.failure).toBeUndefined();
  });

  it('hands out the first audio while the gateway is still sending the rest', async () => {
    tts.tune({ frameIntervalMs: 15 });
    const before = tts.sessions.length;
    const chunks: Int16Array[] = [];
    let sentAtFirstChunk = -1;
    let total = -1;
    for await (const chunk of synthesizer().stream(SENTENCE, VOICE, { sampleRate: 8000 })) {
      if (chunks.length === 0) {
        sentAtFirstChunk = tts.sessions[before]?.framesSent ?? -1;
        total = tts.sessions[before]?.framesTotal ?? -1;
      }
      chunks.push(chunk);
    }
    expect(total).toBeGreaterThan(5);
    expect(sentAtFirstChunk).toBeGreaterThan(0);
    expect(sentAtFirstChunk).toBeLessThan(total);
    expect(chunks.length).toBeGreaterThan(1);
    const joined = await collectSynthesis(
      (async function* () {
        yield* chunks;
      })(),
    );
    expect(joined).toEqual(fakeSpeech(SENTENCE, 8000, MS_PER_CHAR));
    expect(joined.length).toBe(13 * 30 * 8);
  });

  it('joins samples the gateway split across frames', async () => {
    tts.tune({ oddFrames: true });
    const pcm = await collectSynthesis(
      synthesizer().stream('请稍等，正在为您查询。', VOICE, { sampleRate: 8000 }),
    );
    expect(pcm).toEqual(fakeSpeech('请稍等，正在为您查询。', 8000, MS_PER_CHAR));
  });

  it('asks for nothing when there is nothing to say', async () => {
    const before = tts.sessions.length;
    expect(await collectSynthesis(synthesizer().stream('  ', VOICE, { sampleRate: 8000 }))).toHaveLength(0);
    expect(tts.sessions.length).toBe(before);
  });
});

describe('Aliyun NLS streaming synthesis: voice settings', () => {
  it('maps speed 0.5-2 onto speech_rate -500..500 through the documented anchors', () => {
    expect(aliyunSpeechRate(0.5)).toBe(-500);
    expect(aliyunSpeechRate(1)).toBe(0);
    expect(aliyunSpeechRate(2)).toBe(500);
    expect(aliyunSpeechRate(0.8)).toBe(-125);
    expect(aliyunSpeechRate(1.25)).toBe(200);
    expect(aliyunSpeechRate(0.1)).toBe(-500);
    expect(aliyunSpeechRate(9)).toBe(500);
    expect(aliyunSpeechRate(Number.NaN)).toBe(0);
    expect(aliyunVolume(80)).toBe(80);
    expect(aliyunVolume(130)).toBe(100);
    expect(aliyunVolume(-3)).toBe(0);
  });

  it('sends the voice, rate, volume, pitch and sample rate the assistant asked for', async () => {
    const before = tts.sessions.length;
    const pcm = await collectSynthesis(
      synthesizer({ pitchRate: -120 }).stream(
        '好的。',
        { voiceId: 'ruoxi', speed: 2, volume: 35.4 },
        { sampleRate: 8000 },
      ),
    );
    expect(pcm.length).toBe(3 * 30 * 8);
    const start = directive(tts.sessions[before]?.received ?? [], 'StartSynthesis');
    expect(start?.payload).toEqual({
      voice: 'ruoxi',
      format: 'pcm',
      sample_rate: 8000,
      volume: 35,
      speech_rate: 500,
      pitch_rate: -120,
    });
  });

  it('names the voice when the account has no such voice', async () => {
    const err = await failure(
      synthesizer().stream(SENTENCE, { ...VOICE, voiceId: 'nosuchvoice' }, { sampleRate: 8000 }),
    );
    expect(err.kind).toBe('bad_request');
    expect(err.message).toContain('40000003');
    expect(err.message).toContain('音色');
  });

  it('refuses an empty voice before connecting', async () => {
    const before = tts.sessions.length;
    const err = await failure(
      synthesizer().stream(SENTENCE, { ...VOICE, voiceId: ' ' }, { sampleRate: 8000 }),
    );
    expect(err.kind).toBe('bad_request');
    expect(err.message).toContain('音色');
    expect(tts.sessions.length).toBe(before);
  });
});

describe('Aliyun NLS streaming synthesis: tokens and keys', () => {
  it('reuses one CreateToken for many sentences and fetches a new one once a token is revoked', async () => {
    const tokens = new AliyunTokenCache();
    const requests = nls.tokenRequests.length;
    const synth = synthesizer({ tokens });
    await collectSynthesis(synth.stream('第一句。', VOICE, { sampleRate: 8000 }));
    await collectSynthesis(synth.stream('第二句。', VOICE, { sampleRate: 8000 }));
    expect(nls.tokenRequests.length).toBe(requests + 1);

    nls.revokeTokens();
    const pcm = await collectSynthesis(synth.stream('第三句。', VOICE, { sampleRate: 8000 }));
    expect(pcm).toEqual(fakeSpeech('第三句。', 8000, MS_PER_CHAR));
    expect(nls.tokenRequests.length).toBe(requests + 2);
  });

  it('says the AccessKey Secret in 语音配置 is wrong, and never shows it', async () => {
    const err = await failure(
      synthesizer({ accessKeySecret: 'wrong-secret-value-0000' }).stream(SENTENCE, VOICE, {
        sampleRate: 8000,
      }),
    );
    expect(err.kind).toBe('auth');
    expect(err.message).toContain('AccessKey Secret');
    expect(err.message).toContain('语音配置');
    expect(err.message).toContain('语音合成服务');
    expect(err.message).not.toContain('语音识别');
    expect(err.message).not.toContain('wrong-secret-value-0000');
    expect(nls.tokenRequests.at(-1)?.code).toBe('SignatureDoesNotMatch');
  });

  it('says the AccessKey ID in 语音配置 does not exist', async () => {
    const err = await failure(
      synthesizer({ accessKeyId: 'LTAI5tNoSuchKey' }).stream(SENTENCE, VOICE, { sampleRate: 8000 }),
    );
    expect(err.kind).toBe('auth');
    expect(err.message).toContain('AccessKey ID');
    expect(err.message).toContain('语音配置');
  });

  it('names the Appkey when the gateway does not know it', async () => {
    const err = await failure(
      synthesizer({ appKey: 'someoneElsesAppkey' }).stream(SENTENCE, VOICE, { sampleRate: 8000 }),
    );
    expect(err.kind).toBe('auth');
    expect(err.message).toContain('40020105');
    expect(err.message).toContain('语音配置中的 Appkey');
  });

  it('says so when the gateway address is wrong', async () => {
    const err = await failure(
      synthesizer({ gatewayUrl: tts.gatewayUrl.replace('/ws/v1', '/ws/v2') }).stream(SENTENCE, VOICE, {
        sampleRate: 8000,
      }),
    );
    expect(err.kind).toBe('not_found');
    expect(err.message).toContain('网关地址');
  });
});

describe('Aliyun NLS streaming synthesis: failures', () => {
  it('times out when no audio comes, and closes the task', async () => {
    tts.tune({ firstAudioDelayMs: 10_000 });
    const before = tts.sessions.length;
    const started = performance.now();
    const err = await failure(synthesizer({ timeoutMs: 300 }).stream(SENTENCE, VOICE, { sampleRate: 8000 }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toContain('语音合成服务响应超时');
    expect(performance.now() - started).toBeLessThan(5_000);
    await tts.closedSessions(before + 1);
    expect(tts.sessions[before]?.clientLeftEarly).toBe(true);
  });

  it('reports a TaskFailed in the middle of the audio as an upstream failure, after the audio before it', async () => {
    tts.fault({
      afterFrames: 3,
      status: 50000000,
      statusText: 'Gateway:SERVER_ERROR:Synthesis engine failed!',
    });
    const received: Int16Array[] = [];
    const err = await failure(synthesizer().stream(SENTENCE, VOICE, { sampleRate: 8000 }), received);
    expect(err.kind).toBe('upstream');
    expect(err.message).toContain('50000000');
    expect(received.reduce((n, c) => n + c.length, 0)).toBe(3 * 20 * 8);
  });

  it('reports a dropped connection as a network failure', async () => {
    tts.fault({ afterFrames: 2 });
    const err = await failure(synthesizer().stream(SENTENCE, VOICE, { sampleRate: 8000 }));
    expect(err.kind).toBe('network');
    expect(err.message).toContain('连接意外断开');
  });

  it('explains the idle rule when the gateway enforces it', async () => {
    tts.fault({
      afterFrames: 0,
      status: 40000004,
      statusText:
        "Gateway:IDLE_TIMEOUT:Websocket session is idle for too long time, the last directive is 'StopSynthesis'!",
    });
    const err = await failure(synthesizer().stream(SENTENCE, VOICE, { sampleRate: 8000 }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toContain('长时间没有收到合成指令');
  });

  it('reports the account concurrency limit as a rate limit while the first task still plays', async () => {
    const strict = await startFakeAliyunTts({
      nls,
      appKey: APP_KEY,
      msPerChar: MS_PER_CHAR,
      maxConcurrent: 1,
    });
    try {
      strict.tune({ firstAudioDelayMs: 400 });
      const synth = synthesizer({}, strict);
      const first = collectSynthesis(synth.stream(SENTENCE, VOICE, { sampleRate: 8000 }));
      while (!strict.sessions[0]?.sent.some((m) => m.header.name === 'SynthesisStarted')) {
        await new Promise((r) => setTimeout(r, 5));
      }
      const err = await failure(synth.stream('第二路。', VOICE, { sampleRate: 8000 }));
      expect(err.kind).toBe('rate_limit');
      expect(err.message).toContain('40000005');
      expect(await first).toEqual(fakeSpeech(SENTENCE, 8000, MS_PER_CHAR));
    } finally {
      await strict.close();
    }
  });
});

describe('Aliyun NLS streaming synthesis: the idle rule', () => {
  const IDLE: Partial<FakeAliyunTtsOptions> = { idleTimeoutMs: 250, msPerChar: MS_PER_CHAR };

  it('is enforced by the fake gateway: a started task without text fails with 40000004', async () => {
    const idle = await startFakeAliyunTts({ nls, appKey: APP_KEY, ...IDLE });
    try {
      const token = nls.issueToken();
      const ws = new WebSocket(idle.gatewayUrl, { headers: { 'X-NLS-Token': token } });
      const events: NlsMessage[] = [];
      ws.on('message', (data, isBinary) => {
        if (!isBinary) events.push(JSON.parse(data.toString()) as NlsMessage);
      });
      await new Promise((resolve) => ws.once('open', resolve));
      const taskId = '0123456789abcdef0123456789abcdef';
      ws.send(
        JSON.stringify({
          header: {
            message_id: 'fedcba9876543210fedcba9876543210',
            task_id: taskId,
            namespace: 'FlowingSpeechSynthesizer',
            name: 'StartSynthesis',
            appkey: APP_KEY,
          },
          payload: { voice: 'xiaoyun', format: 'pcm', sample_rate: 8000 },
        }),
      );
      await new Promise((resolve) => ws.once('close', resolve));
      expect(events.map((e) => e.header.name)).toEqual(['SynthesisStarted', 'TaskFailed']);
      expect(events[1]?.header.status).toBe(40000004);
      expect(events[1]?.header.status_text).toContain("'StartSynthesis'");
    } finally {
      await idle.close();
    }
  });

  it('never trips it: the sentence and its end go out at once, however long the audio takes to start', async () => {
    const idle = await startFakeAliyunTts({ nls, appKey: APP_KEY, ...IDLE, firstAudioDelayMs: 600 });
    try {
      const pcm = await collectSynthesis(synthesizer({}, idle).stream(SENTENCE, VOICE, { sampleRate: 8000 }));
      expect(pcm).toEqual(fakeSpeech(SENTENCE, 8000, MS_PER_CHAR));
      await idle.closedSessions(1);
      expect(idle.sessions[0]?.failure).toBeUndefined();
      expect(idle.sessions[0]?.lingered).toBe(false);
    } finally {
      await idle.close();
    }
  });
});

describe('Aliyun NLS streaming synthesis: barge-in', () => {
  it('stops at once when aborted: no error, no more audio, the task closed', async () => {
    tts.tune({ frameIntervalMs: 20 });
    const before = tts.sessions.length;
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
    await tts.closedSessions(before + 1);
    const session = tts.sessions[before];
    expect(session?.clientLeftEarly).toBe(true);
    expect(session?.framesSent).toBeLessThan(session?.framesTotal ?? 0);
  });

  it('closes the task when the caller leaves the loop', async () => {
    tts.tune({ frameIntervalMs: 20 });
    const before = tts.sessions.length;
    for await (const _ of synthesizer().stream(SENTENCE, VOICE, { sampleRate: 8000 })) break;
    await tts.closedSessions(before + 1);
    expect(tts.sessions[before]?.clientLeftEarly).toBe(true);
  });

  it('does not connect for a signal aborted before the start', async () => {
    const before = tts.sessions.length;
    const requests = nls.tokenRequests.length;
    const pcm = await collectSynthesis(
      synthesizer().stream(SENTENCE, VOICE, { sampleRate: 8000, signal: AbortSignal.abort() }),
    );
    expect(pcm).toHaveLength(0);
    expect(tts.sessions.length).toBe(before);
    expect(nls.tokenRequests.length).toBe(requests);
  });
});
