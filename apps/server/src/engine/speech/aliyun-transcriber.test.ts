import net from 'node:net';
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ProviderError } from '../brain/openai-client';
import { AliyunTokenCache } from './aliyun-token';
import { type AliyunRecognizerOptions, createAliyunRecognizer, taskFailure } from './aliyun-transcriber';
import {
  type FakeAliyunNls,
  type FakeAliyunNlsOptions,
  type NlsMessage,
  startFakeAliyunNls,
} from './testing/aliyun-nls-server';

const AK_ID = 'LTAI5tRecognizerKeyId';
const AK_SECRET = 'nlsSecret-0a1b2c3d4e5f6a7b8c9d';
const APP_KEY = 'appkeyCallPilot01';
const HEX32 = /^[0-9a-f]{32}$/;

/** A 440 Hz tone of `ms` at 8 kHz (well above the server's speech threshold). */
function tone(ms: number): Int16Array {
  const pcm = new Int16Array((ms * 8000) / 1000);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return pcm;
}
const silence = (ms: number) => new Int16Array((ms * 8000) / 1000);
const concat = (...parts: Int16Array[]) => {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
/** The media loop's 20 ms frames. */
const frames = (pcm: Int16Array) => {
  const out: Int16Array[] = [];
  for (let at = 0; at < pcm.length; at += 160) out.push(pcm.subarray(at, at + 160));
  return out;
};

/**
 * Near-real-time as a strict server reads it: at most 400 ms ahead of the wall clock, then no
 * faster than 1.2 × real time. Idle timeout 2 s here; the idle test runs its own server.
 */
const STRICT: FakeAliyunNlsOptions = {
  accessKeys: { [AK_ID]: AK_SECRET },
  appKey: APP_KEY,
  idleTimeoutMs: 2_000,
  maxSpeedup: 1.2,
  burstMs: 400,
  partialEveryMs: 100,
};

let nls: FakeAliyunNls;
beforeAll(async () => {
  nls = await startFakeAliyunNls(STRICT);
});
afterAll(() => nls.close());
afterEach(() => nls.hear(() => ''));

const recognizer = (over: Partial<AliyunRecognizerOptions> = {}, server = nls) =>
  createAliyunRecognizer({
    appKey: APP_KEY,
    accessKeyId: AK_ID,
    accessKeySecret: AK_SECRET,
    gatewayUrl: server.gatewayUrl,
    tokenUrl: server.tokenUrl,
    timeoutMs: 2_000,
    tokens: new AliyunTokenCache(),
    ...over,
  });

const directive = (messages: NlsMessage[], name: string) => messages.find((m) => m.header.name === name);
const eventNames = (messages: NlsMessage[]) => messages.map((m) => m.header.name);

async function failure(promise: Promise<unknown>, token?: string): Promise<ProviderError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the recognition to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  const provider = err as ProviderError;
  expect(provider.service).toBe('speech_recognition');
  for (const secret of [AK_SECRET, ...(token ? [token] : [])]) {
    expect(inspect(provider, { depth: 5 })).not.toContain(secret);
    expect(JSON.stringify(provider)).not.toContain(secret);
  }
  return provider;
}

describe('Aliyun NLS recogniser: transcribe', () => {
  it('runs the documented task (token header, StartTranscription, paced PCM, Stop) and returns the sentence', async () => {
    nls.hear((heard) => (heard.final ? (heard.durationMs >= 500 ? '我想办宽带' : '听错了') : '我想'));
    const before = nls.sessions.length;
    const utterance = concat(tone(600), silence(100));

    const transcript = await recognizer().transcribe(
      { pcm: utterance, sampleRate: 8000 },
      { language: 'zh' },
    );

    // Punctuation was asked for, and the server added it.
    expect(transcript).toEqual({ text: '我想办宽带。', durationMs: 700 });
    await nls.closedSessions(before + 1);
    const session = nls.sessions[before];
    expect(session?.tokenVia).toBe('header');
    expect(nls.tokenRequests.at(-1)?.token).toBe(session?.token);
    const start = directive(session?.received ?? [], 'StartTranscription');
    expect(start?.header).toMatchObject({ namespace: 'SpeechTranscriber', appkey: APP_KEY });
    expect(start?.header.message_id).toMatch(HEX32);
    expect(start?.header.task_id).toMatch(HEX32);
    expect(start?.payload).toEqual({
      format: 'pcm',
      sample_rate: 8000,
      enable_intermediate_result: true,
      enable_punctuation_prediction: true,
      enable_inverse_text_normalization: true,
    });
    const stop = directive(session?.received ?? [], 'StopTranscription');
    expect(stop?.header.task_id).toBe(start?.header.task_id);
    expect(stop?.header.message_id).not.toBe(start?.header.message_id);
    expect(session?.audioBytes).toBe(utterance.length * 2);
    expect(eventNames(session?.sent ?? [])).toEqual(
      expect.arrayContaining([
        'TranscriptionStarted',
        'SentenceBegin',
        'SentenceEnd',
        'TranscriptionCompleted',
      ]),
    );
    // The client closed after TranscriptionCompleted, not before.
    expect(session?.clientLeftEarly).toBe(false);
    expect(session?.failure).toBeUndefined();
  });

  it('asks nothing for an empty utterance', async () => {
    const before = nls.sessions.length;
    expect(
      await recognizer().transcribe({ pcm: new Int16Array(0), sampleRate: 8000 }, { language: 'zh' }),
    ).toEqual({
      text: '',
      durationMs: 0,
    });
    expect(nls.sessions.length).toBe(before);
  });
});

describe('Aliyun NLS recogniser: streaming session', () => {
  it('reports partials, then the final text of every sentence', async () => {
    nls.hear((heard) => {
      const words = heard.index === 1 ? '你好' : '我要查话费';
      return heard.final ? words : words.slice(0, Math.max(1, Math.floor(heard.durationMs / 100)));
    });
    const before = nls.sessions.length;
    const session = recognizer({ maxSentenceSilenceMs: 200 }).openSession?.({ language: 'zh' });
    if (!session) throw new Error('the Aliyun recogniser streams');
    const partials: string[] = [];
    let finished = false;
    session.onPartial((text) => {
      expect(finished).toBe(false);
      partials.push(text);
    });
    // Two sentences separated by more silence than max_sentence_silence.
    for (const frame of frames(concat(tone(300), silence(300), tone(400)))) session.write(frame);

    const transcript = await session.finish();
    finished = true;

    expect(transcript).toEqual({ text: '你好。我要查话费。', durationMs: 1000 });
    expect(partials.length).toBeGreaterThanOrEqual(3);
    // First sentence's partial, the first sentence final, then the second building on it.
    expect(partials).toContain('你好。');
    expect(partials.some((p) => p.startsWith('你好。我'))).toBe(true);
    expect(partials.indexOf('你好。')).toBeLessThan(partials.findIndex((p) => p.startsWith('你好。我')));
    const sent = nls.sessions[before]?.sent ?? [];
    expect(eventNames(sent).filter((n) => n === 'SentenceEnd')).toHaveLength(2);
    expect(eventNames(sent)).toContain('TranscriptionResultChanged');
    expect(directive(nls.sessions[before]?.received ?? [], 'StartTranscription')?.payload).toMatchObject({
      max_sentence_silence: 200,
    });
  });

  it('passes hotwords as Aliyun takes them: a vocabulary id (and a customisation id)', async () => {
    const before = nls.sessions.length;
    await recognizer({ vocabularyId: 'vocab-default', customizationId: 'custom-model-1' }).transcribe(
      { pcm: tone(100), sampleRate: 8000 },
      { language: 'zh' },
    );
    const asked: string[] = [];
    await recognizer({
      vocabularyId: 'vocab-default',
      vocabularyFor: (hotwords) => {
        asked.push(hotwords);
        return 'vocab-broadband';
      },
    }).transcribe({ pcm: tone(100), sampleRate: 8000 }, { language: 'zh', prompt: ' 宽带 套餐 ' });

    const payloads = nls.sessions
      .slice(before)
      .map((s) => directive(s.received, 'StartTranscription')?.payload);
    expect(payloads[0]).toMatchObject({ vocabulary_id: 'vocab-default', customization_id: 'custom-model-1' });
    expect(payloads[1]).toMatchObject({ vocabulary_id: 'vocab-broadband' });
    expect(payloads[1]).not.toHaveProperty('customization_id');
    expect(asked).toEqual(['宽带 套餐']);
  });

  it('abort() closes the socket without a result', async () => {
    const before = nls.sessions.length;
    const session = recognizer().openSession?.({ language: 'zh' });
    if (!session) throw new Error('the Aliyun recogniser streams');
    session.write(tone(100));
    while (!nls.sessions[before]?.sent.some((m) => m.header.name === 'TranscriptionStarted')) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    session.abort();
    await nls.closedSessions(before + 1);

    expect(nls.sessions[before]?.clientLeftEarly).toBe(true);
    expect(directive(nls.sessions[before]?.received ?? [], 'StopTranscription')).toBeUndefined();
    await expect(session.finish()).rejects.toMatchObject({ name: 'AbortError' });
  });

  it("the caller's signal ends a transcription with the signal's reason", async () => {
    const controller = new AbortController();
    const reason = new Error('caller hung up');
    const pending = recognizer().transcribe(
      { pcm: tone(1500), sampleRate: 8000 },
      { language: 'zh', signal: controller.signal },
    );
    setTimeout(() => controller.abort(reason), 50);
    await expect(pending).rejects.toBe(reason);
  });
});

describe('Aliyun NLS recogniser: real-time rate', () => {
  it('the server refuses audio sent faster than real time', async () => {
    const token = nls.issueToken();
    const ws = new WebSocket(`${nls.gatewayUrl}?token=${token}`);
    const events: NlsMessage[] = [];
    const taskId = 'a'.repeat(32);
    await new Promise<void>((resolve, reject) => {
      ws.on('error', reject);
      ws.on('close', () => resolve());
      ws.on('open', () =>
        ws.send(
          JSON.stringify({
            header: {
              message_id: 'b'.repeat(32),
              task_id: taskId,
              namespace: 'SpeechTranscriber',
              name: 'StartTranscription',
              appkey: APP_KEY,
            },
            payload: { format: 'pcm', sample_rate: 8000 },
          }),
        ),
      );
      ws.on('message', (data) => {
        const event = JSON.parse(String(data)) as NlsMessage;
        events.push(event);
        // Two seconds of audio at once, as a client reading a file without pacing would.
        if (event.header.name === 'TranscriptionStarted') ws.send(Buffer.alloc(32_000));
      });
    });
    expect(events.at(-1)?.header).toMatchObject({ name: 'TaskFailed', status: 40000000, task_id: taskId });
    expect(events.at(-1)?.header.status_text).toContain('faster than real time');
  });

  it('the recogniser paces its audio so the same server accepts it, and would be refused without pacing', async () => {
    nls.hear((heard) => (heard.final ? '好的' : ''));
    const utterance = { pcm: tone(1200), sampleRate: 8000 as const };
    const before = nls.sessions.length;
    const started = Date.now();
    expect((await recognizer().transcribe(utterance, { language: 'zh' })).text).toBe('好的。');
    // Real time after a 300 ms burst: 1.2 s of audio takes at least ~0.9 s to send.
    expect(Date.now() - started).toBeGreaterThanOrEqual(850);
    expect(nls.sessions[before]?.maxLeadMs).toBeLessThanOrEqual(400);

    const err = await failure(
      recognizer({ pacing: { burstMs: 60_000, speedup: 100 } }).transcribe(utterance, { language: 'zh' }),
    );
    expect(err.kind).toBe('bad_request');
    expect(err.upstreamStatus).toBe(40000000);
    expect(err.message).toContain('faster than real time');
  });
});

describe('Aliyun NLS recogniser: failures', () => {
  it('a wrong AccessKey Secret is an auth error naming the profile; no gateway session is opened', async () => {
    const before = nls.sessions.length;
    const err = await failure(
      recognizer({ accessKeySecret: 'nlsSecret-not-the-right-one' }).transcribe(
        { pcm: tone(200), sampleRate: 8000 },
        { language: 'zh' },
      ),
    );
    expect(err.kind).toBe('auth');
    expect(err.message).toContain('语音识别配置');
    expect(err.message).not.toContain('nlsSecret-not-the-right-one');
    expect(nls.sessions.length).toBe(before);
  });

  it('a cached token the gateway refuses is replaced once; a fresh one refused is an auth error', async () => {
    const tokens = new AliyunTokenCache();
    const utterance = { pcm: tone(100), sampleRate: 8000 as const };
    await recognizer({ tokens }).transcribe(utterance, { language: 'zh' });
    const requests = nls.tokenRequests.length;
    nls.revokeTokens();
    // Refused at the handshake (403), fetched anew, and the call goes through.
    await recognizer({ tokens }).transcribe(utterance, { language: 'zh' });
    expect(nls.tokenRequests.length).toBe(requests + 1);

    // Expired on the server's clock while the cache still trusts it: TaskFailed 40000001 at
    // StartTranscription, then a fresh token.
    let offset = 0;
    const drifting = await startFakeAliyunNls({
      ...STRICT,
      tokenTtlMs: 5 * 60_000,
      now: () => Date.now() + offset,
    });
    try {
      const driftTokens = new AliyunTokenCache();
      await recognizer({ tokens: driftTokens }, drifting).transcribe(utterance, { language: 'zh' });
      offset = 10 * 60_000;
      await recognizer({ tokens: driftTokens }, drifting).transcribe(utterance, { language: 'zh' });
      expect(drifting.sessions.map((s) => s.failure?.status)).toEqual([undefined, 40000001, undefined]);
      expect(drifting.tokenRequests).toHaveLength(2);
    } finally {
      await drifting.close();
    }

    // A server whose tokens are already expired when issued: TaskFailed 40000001, quoting the token.
    const expired = await startFakeAliyunNls({ ...STRICT, tokenTtlMs: -1_000 });
    try {
      const err = await failure(recognizer({}, expired).transcribe(utterance, { language: 'zh' }));
      const token = expired.tokenRequests.at(-1)?.token as string;
      expect(expired.sessions.at(-1)?.failure?.statusText).toContain(token);
      expect(err.message).not.toContain(token);
      expect(inspect(err)).not.toContain(token);
      expect(err.kind).toBe('auth');
      expect(err.message).toContain('语音识别配置');
      expect(expired.tokenRequests).toHaveLength(1);
    } finally {
      await expired.close();
    }
  });

  it('an unknown Appkey is an auth error naming the Appkey', async () => {
    const err = await failure(
      recognizer({ appKey: 'no-such-appkey' }).transcribe(
        { pcm: tone(100), sampleRate: 8000 },
        { language: 'zh' },
      ),
    );
    expect(err.kind).toBe('auth');
    expect(err.upstreamStatus).toBe(40020105);
    expect(err.message).toContain('Appkey');
  });

  it('an error in the middle of the stream rejects with a ProviderError', async () => {
    nls.hear((heard) =>
      heard.durationMs >= 200 ? { fail: { status: 50000000, statusText: 'GRPC_ERROR:Grpc error!' } } : '喂',
    );
    const session = recognizer().openSession?.({ language: 'zh' });
    if (!session) throw new Error('the Aliyun recogniser streams');
    const partials: string[] = [];
    session.onPartial((text) => partials.push(text));
    for (const frame of frames(tone(600))) session.write(frame);
    const err = await failure(session.finish());
    expect(err.kind).toBe('upstream');
    expect(err.upstreamStatus).toBe(50000000);
    expect(err.message).toContain('暂时不可用');
    expect(partials).toContain('喂');
  });

  it('the server closes an idle session (40000004), and the session says so', async () => {
    const idle = await startFakeAliyunNls({ ...STRICT, idleTimeoutMs: 150 });
    try {
      const session = recognizer({}, idle).openSession?.({ language: 'zh' });
      if (!session) throw new Error('the Aliyun recogniser streams');
      session.write(tone(40));
      // The leg stops feeding audio; the gateway gives up on the session.
      await idle.closedSessions(1);
      const err = await failure(session.finish());
      expect(err.kind).toBe('timeout');
      expect(err.upstreamStatus).toBe(40000004);
      expect(err.message).toContain('长时间没有收到音频');
      expect(idle.sessions[0]?.failure?.status).toBe(40000004);
    } finally {
      await idle.close();
    }
  });

  it('a gateway that never answers the handshake times out on the timeout', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as net.AddressInfo;
      const err = await failure(
        recognizer({ gatewayUrl: `ws://127.0.0.1:${port}/ws/v1`, timeoutMs: 300 }).transcribe(
          { pcm: tone(100), sampleRate: 8000 },
          { language: 'zh' },
        ),
      );
      expect(err.kind).toBe('timeout');
      expect(err.message).toContain('300 毫秒');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('an unreachable gateway is a network error naming the gateway address', async () => {
    const err = await failure(
      recognizer({ gatewayUrl: 'ws://127.0.0.1:1/ws/v1' }).transcribe(
        { pcm: tone(100), sampleRate: 8000 },
        { language: 'zh' },
      ),
    );
    expect(err.kind).toBe('network');
    expect(err.message).toContain('网关地址');
  });

  it('a malformed gateway address is a bad_request naming the gateway address', async () => {
    const err = await failure(
      recognizer({ gatewayUrl: 'nls-gateway-cn-shanghai.aliyuncs.com/ws/v1' }).transcribe(
        { pcm: tone(100), sampleRate: 8000 },
        { language: 'zh' },
      ),
    );
    expect(err.kind).toBe('bad_request');
    expect(err.message).toContain('网关地址');
  });

  it('maps status texts without quoting a token or the secret', () => {
    const err = taskFailure(40000001, "Gateway:ACCESS_DENIED:The token 'abcdef0123456789' is invalid!", [
      AK_SECRET,
    ]);
    expect(err.message).not.toContain('abcdef0123456789');
    expect(err.message).toContain("token '***'");
    expect(taskFailure(40000005, 'Gateway:TOO_MANY_REQUESTS:Too many requests!').kind).toBe('rate_limit');
    expect(taskFailure(41010101, 'UNSUPPORTED_SAMPLE_RATE').kind).toBe('bad_request');
    expect(taskFailure(40000010, 'Gateway:FREE_TRIAL_EXPIRED:The free trial has expired!').kind).toBe('auth');
  });
});
