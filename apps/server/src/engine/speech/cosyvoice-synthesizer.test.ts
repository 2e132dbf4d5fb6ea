import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ProviderError } from '../brain/openai-client';
import { VirtualClock } from '../clock';
import {
  type CosyVoiceSynthesizerOptions,
  createCosyVoiceSynthesizer,
  taskFailure,
  textPieces,
} from './cosyvoice-synthesizer';
import { collectSynthesis, type StreamingSynthesizer, type SynthesisVoice } from './synthesis';
import {
  type DashScopeTask,
  type DashScopeTtsServer,
  dashScopeTone,
  startDashScopeTtsServer,
} from './testing/dashscope-tts-server';

const KEY = 'sk-3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6';
const VOICE: SynthesisVoice = { voiceId: 'longxiaochun_v2', speed: 1, volume: 50 };
const GREETING = '您好，这里是客服中心。请问有什么可以帮您？';
/** The fake's defaults: 60 ms of tone per character, 100 ms per frame. */
const MS_PER_CHAR = 60;

let server: DashScopeTtsServer;
const synthesizers: StreamingSynthesizer[] = [];

beforeEach(async () => {
  server = await startDashScopeTtsServer({ apiKey: KEY });
});
afterEach(async () => {
  await Promise.all(synthesizers.splice(0).map((s) => s.close?.()));
  await server.close();
});

function synthesizer(over: Partial<CosyVoiceSynthesizerOptions> = {}): StreamingSynthesizer {
  const created = createCosyVoiceSynthesizer({ apiKey: KEY, url: server.url, ...over });
  synthesizers.push(created);
  return created;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what = 'condition', timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

function expectSameAudio(actual: Int16Array, expected: Int16Array) {
  expect(actual.length).toBe(expected.length);
  const a = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength);
  const b = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
  expect(a.equals(b), 'the samples differ from the text’s tone').toBe(true);
}

const tone = (text: string, sampleRate: number, rate = 1, volume = 50) =>
  dashScopeTone(text, { sampleRate, rate, volume, msPerChar: MS_PER_CHAR });

/** Every chunk until the stream ends or fails. */
async function drain(stream: AsyncIterable<Int16Array>) {
  const chunks: Int16Array[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk);
    return { chunks, error: undefined as unknown };
  } catch (error) {
    return { chunks, error };
  }
}

function joined(chunks: Int16Array[]): Int16Array {
  const out = new Int16Array(chunks.reduce((sum, c) => sum + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/** The failure a stream ended with, checked for what a console user and a log must never see. */
function providerFailure(error: unknown, ...secrets: string[]): ProviderError {
  expect(error).toBeInstanceOf(ProviderError);
  const failure = error as ProviderError;
  expect(failure.service).toBe('speech_synthesis');
  for (const secret of [KEY, ...secrets]) {
    expect(failure.message).not.toContain(secret);
    expect(inspect(failure, { depth: 5 })).not.toContain(secret);
    expect(JSON.stringify(failure)).not.toContain(secret);
  }
  return failure;
}

const task = (index: number) => server.received[index] as DashScopeTask;

describe('CosyVoice over DashScope', () => {
  it('synthesises a sentence as 16-bit PCM at the requested rate, with the documented run-task', async () => {
    const audio = await collectSynthesis(synthesizer().stream(GREETING, VOICE, { sampleRate: 8000 }));

    expectSameAudio(audio, tone(GREETING, 8000));
    expect((audio.length / 8000) * 1000).toBe([...GREETING].length * MS_PER_CHAR);
    expect(server.received).toHaveLength(1);
    expect(task(0)).toMatchObject({ model: 'cosyvoice-v2', texts: [GREETING], state: 'finished' });
    expect(task(0).taskId).toMatch(/^[0-9a-f]{32}$/);
    expect(task(0).parameters).toEqual({
      text_type: 'PlainText',
      voice: 'longxiaochun_v2',
      format: 'pcm',
      sample_rate: 8000,
      volume: 50,
      rate: 1,
      pitch: 1,
    });
    const headers = server.sockets[0]?.headers ?? {};
    expect(headers.authorization).toBe(`bearer ${KEY}`);
    expect(headers['x-dashscope-datainspection']).toBe('enable');

    // A preview asks for 16 kHz: twice the samples for the same speech.
    const wide = await collectSynthesis(synthesizer().stream('好的。', VOICE, { sampleRate: 16000 }));
    expectSameAudio(wide, tone('好的。', 16000));
    expect(task(1).parameters.sample_rate).toBe(16000);
  });

  it('yields the first audio while the vendor is still sending the rest', async () => {
    server.set({ interFrameDelayMs: 40 });
    const text = '我们的宽带套餐有三种。';
    const chunks: Int16Array[] = [];
    let atFirstChunk: { framesSent: number; framesPlanned: number; state: string } | undefined;
    for await (const chunk of synthesizer().stream(text, VOICE, { sampleRate: 8000 })) {
      if (!atFirstChunk) atFirstChunk = { ...task(0) };
      chunks.push(chunk);
    }
    expect(atFirstChunk?.framesPlanned).toBeGreaterThanOrEqual(6);
    expect(atFirstChunk?.framesSent).toBeLessThan(atFirstChunk?.framesPlanned ?? 0);
    expect(atFirstChunk?.state).toBe('started');
    expect(chunks.length).toBeGreaterThan(1);
    expectSameAudio(joined(chunks), tone(text, 8000));
  });

  it('carries an odd byte across frames, so no sample is split or shifted', async () => {
    server.set({ oddFrames: true, frameMs: 30 });
    const { chunks, error } = await drain(synthesizer().stream(GREETING, VOICE, { sampleRate: 8000 }));
    expect(error).toBeUndefined();
    expect(chunks.every((chunk) => chunk.length > 0)).toBe(true);
    expectSameAudio(joined(chunks), tone(GREETING, 8000));
  });

  it('maps speed and volume onto rate and volume, within the vendor’s ranges', async () => {
    const synth = synthesizer();
    const fast = await collectSynthesis(
      synth.stream('好的。', { ...VOICE, speed: 2, volume: 40 }, { sampleRate: 8000 }),
    );
    expect(task(0).parameters).toMatchObject({ rate: 2, volume: 40 });
    expectSameAudio(fast, tone('好的。', 8000, 2, 40));
    expect(fast.length).toBe(tone('好的。', 8000).length / 2);

    await collectSynthesis(synth.stream('好的。', { ...VOICE, speed: 3, volume: 150 }, { sampleRate: 8000 }));
    await collectSynthesis(
      synth.stream('好的。', { ...VOICE, speed: 0.1, volume: -5 }, { sampleRate: 8000 }),
    );
    expect(task(1).parameters).toMatchObject({ rate: 2, volume: 100 });
    expect(task(2).parameters).toMatchObject({ rate: 0.5, volume: 0 });
  });

  it('passes a cloned voice’s id as the voice', async () => {
    const cloned = { ...VOICE, voiceId: 'cosyvoice-v2-callpilot-8d3f2a1b9c0e4f57' };
    await collectSynthesis(synthesizer().stream('好的。', cloned, { sampleRate: 8000 }));
    expect(task(0).parameters.voice).toBe('cosyvoice-v2-callpilot-8d3f2a1b9c0e4f57');
  });

  it('reuses one connection for consecutive sentences, each task with its own id', async () => {
    const synth = synthesizer();
    const first = await collectSynthesis(synth.stream('您好。', VOICE, { sampleRate: 8000 }));
    const second = await collectSynthesis(synth.stream('请问有什么可以帮您？', VOICE, { sampleRate: 8000 }));

    expectSameAudio(first, tone('您好。', 8000));
    expectSameAudio(second, tone('请问有什么可以帮您？', 8000));
    expect(server.connections).toBe(1);
    expect(server.received.map((t) => t.state)).toEqual(['finished', 'finished']);
    expect(task(0).taskId).not.toBe(task(1).taskId);
    expect(new Set(server.received.map((t) => t.connection))).toEqual(new Set([0]));
  });

  it('never runs two tasks on one socket: concurrent sentences get their own connections', async () => {
    server.set({ interFrameDelayMs: 10 });
    const synth = synthesizer();
    const [a, b] = await Promise.all([
      collectSynthesis(synth.stream('第一句话。', VOICE, { sampleRate: 8000 })),
      collectSynthesis(synth.stream('第二句。', VOICE, { sampleRate: 8000 })),
    ]);
    expectSameAudio(a, tone('第一句话。', 8000));
    expectSameAudio(b, tone('第二句。', 8000));
    expect(server.connections).toBe(2);
    expect(server.received.every((t) => t.state === 'finished')).toBe(true);

    // Both sockets went back to the pool: a third sentence opens nothing new.
    await collectSynthesis(synth.stream('第三句。', VOICE, { sampleRate: 8000 }));
    expect(server.connections).toBe(2);
  });

  it('reports a refused API key at the handshake as an auth failure naming the profile', async () => {
    const wrong = 'sk-0000wrongwrongwrongwrong0000';
    const { chunks, error } = await drain(
      synthesizer({ apiKey: wrong }).stream(GREETING, VOICE, { sampleRate: 8000 }),
    );
    expect(chunks).toHaveLength(0);
    const failure = providerFailure(error, wrong);
    expect(failure.kind).toBe('auth');
    expect(failure.upstreamStatus).toBe(401);
    expect(failure.message).toContain('语音配置');
    expect(failure.message).toContain('API Key');
    expect(server.refusedUpgrades).toBe(1);
    expect(server.received).toHaveLength(0);
  });

  it('reports InvalidApiKey in a task-failed (older gateways) the same way', async () => {
    server.set({ authFailure: 'task-failed' });
    const wrong = 'sk-1111wrongwrongwrongwrong1111';
    const { error } = await drain(
      synthesizer({ apiKey: wrong }).stream(GREETING, VOICE, { sampleRate: 8000 }),
    );
    const failure = providerFailure(error, wrong);
    expect(failure.kind).toBe('auth');
    expect(failure.message).toContain('InvalidApiKey');
    expect(failure.message).toContain('语音配置中的 API Key');
  });

  it('reports throttling when more tasks run than the account allows, without hurting the running one', async () => {
    server.set({ maxConcurrentTasks: 1, firstAudioDelayMs: 600 });
    const synth = synthesizer();
    const running = collectSynthesis(synth.stream('第一句话。', VOICE, { sampleRate: 8000 }));
    await until(() => server.received.length === 1, 'the first task');
    const { error } = await drain(synth.stream('第二句。', VOICE, { sampleRate: 8000 }));

    const failure = providerFailure(error);
    expect(failure.kind).toBe('rate_limit');
    expect(failure.message).toContain('Throttling.RateQuota');
    expect(failure.message).toContain('限额');
    expectSameAudio(await running, tone('第一句话。', 8000));
  });

  it('fails with a timeout when no audio arrives within timeoutMs on the engine clock', async () => {
    server.set({ firstAudioDelayMs: 3000 });
    const clock = new VirtualClock();
    const result = drain(synthesizer({ clock }).stream(GREETING, VOICE, { sampleRate: 8000 }));
    await until(() => task(0)?.finishReceived === true, 'the text to reach the vendor');
    await clock.advance(9_999);
    expect(task(0).state).toBe('started');
    await clock.advance(1);

    const { chunks, error } = await result;
    expect(chunks).toHaveLength(0);
    const failure = providerFailure(error);
    expect(failure.kind).toBe('timeout');
    expect(failure.message).toContain('10 秒');
    // The late audio must not surface anywhere: the socket is closed, not pooled.
    await until(() => server.sockets[0]?.closedBy === 'client', 'the client to close the socket');
  });

  it('passes a task-failed in mid-stream on as an upstream failure, key masked, after the audio so far', async () => {
    server.failNext({
      afterFrames: 2,
      kind: 'task-failed',
      errorCode: 'InternalError',
      errorMessage: `engine crashed while serving bearer ${KEY}`,
    });
    const synth = synthesizer();
    const { chunks, error } = await drain(synth.stream(GREETING, VOICE, { sampleRate: 8000 }));

    const failure = providerFailure(error);
    expect(failure.kind).toBe('upstream');
    expect(failure.message).toContain('engine crashed');
    expect(failure.message).toContain('InternalError');
    // The caller heard the first two frames (100 ms each), exactly.
    expectSameAudio(joined(chunks), tone(GREETING, 8000).subarray(0, 2 * 800));

    // The failed connection is not reused; the next sentence works on a fresh one.
    const next = await collectSynthesis(synth.stream('好的。', VOICE, { sampleRate: 8000 }));
    expectSameAudio(next, tone('好的。', 8000));
    expect(server.connections).toBe(2);
  });

  it('reports a connection dropped in mid-stream as a network failure', async () => {
    server.failNext({ afterFrames: 1, kind: 'drop' });
    const synth = synthesizer();
    const { chunks, error } = await drain(synth.stream(GREETING, VOICE, { sampleRate: 8000 }));
    const failure = providerFailure(error);
    expect(failure.kind).toBe('network');
    expect(failure.message).toContain('意外断开');
    expect(joined(chunks).length).toBe(800);

    const next = await collectSynthesis(synth.stream('好的。', VOICE, { sampleRate: 8000 }));
    expectSameAudio(next, tone('好的。', 8000));
  });

  it('stops at once on abort, closes that socket, and the next sentence hears none of the old one', async () => {
    server.set({ interFrameDelayMs: 30 });
    const synth = synthesizer();
    const bargeIn = new AbortController();
    const heard: Int16Array[] = [];
    for await (const chunk of synth.stream('这是一段很长很长的介绍，介绍我们所有的套餐。', VOICE, {
      sampleRate: 8000,
      signal: bargeIn.signal,
    })) {
      heard.push(chunk);
      bargeIn.abort();
    }
    expect(heard).toHaveLength(1);
    await until(() => server.sockets[0]?.closedBy === 'client', 'the aborted socket to close');
    expect(task(0).state).toBe('abandoned');
    expect(task(0).framesSent).toBeLessThan(task(0).framesPlanned);

    const next = await collectSynthesis(synth.stream('好的。', VOICE, { sampleRate: 8000 }));
    expectSameAudio(next, tone('好的。', 8000));
    expect(server.connections).toBe(2);
    expect(task(1).connection).toBe(1);
  });

  it('closes the socket when the consumer stops early, and does nothing for an already aborted signal', async () => {
    server.set({ interFrameDelayMs: 30 });
    const synth = synthesizer();
    for await (const _chunk of synth.stream(GREETING, VOICE, { sampleRate: 8000 })) break;
    await until(() => server.sockets[0]?.closedBy === 'client', 'the socket to close');

    const aborted = AbortSignal.abort();
    const { chunks, error } = await drain(
      synth.stream(GREETING, VOICE, { sampleRate: 8000, signal: aborted }),
    );
    expect(chunks).toHaveLength(0);
    expect(error).toBeUndefined();
    expect(server.connections).toBe(1);
  });

  it('closes pooled connections after idleMs on its clock, and close() closes the rest', async () => {
    const clock = new VirtualClock();
    const synth = synthesizer({ clock, idleMs: 30_000 });
    await collectSynthesis(synth.stream('好的。', VOICE, { sampleRate: 8000 }));
    await clock.advance(29_000);
    await sleep(20);
    expect(server.sockets[0]?.closedBy).toBeNull();
    await clock.advance(1_000);
    await until(() => server.sockets[0]?.closedBy === 'client', 'the idle socket to close');

    await collectSynthesis(synth.stream('好的。', VOICE, { sampleRate: 8000 }));
    expect(server.connections).toBe(2);
    await synth.close?.();
    await until(() => server.openConnections === 0, 'close() to close the pool');
    expect(server.sockets[1]?.closedBy).toBe('client');
  });

  it('opens a new connection when the vendor closed an idle one (its 60 s rule)', async () => {
    server.set({ connectionIdleMs: 50 });
    const synth = synthesizer();
    await collectSynthesis(synth.stream('您好。', VOICE, { sampleRate: 8000 }));
    await until(() => server.sockets[0]?.closedBy === 'server', 'the vendor to drop the idle socket');
    const next = await collectSynthesis(synth.stream('好的。', VOICE, { sampleRate: 8000 }));
    expectSameAudio(next, tone('好的。', 8000));
    expect(server.connections).toBe(2);
  });

  it('retries once on a fresh socket when a reused one dies before its task started', async () => {
    const synth = synthesizer();
    await collectSynthesis(synth.stream('您好。', VOICE, { sampleRate: 8000 }));
    server.failNext({ at: 'run-task', kind: 'drop' });
    const next = await collectSynthesis(synth.stream('好的。', VOICE, { sampleRate: 8000 }));
    expectSameAudio(next, tone('好的。', 8000));
    expect(server.connections).toBe(2);
    expect(server.received.map((t) => t.state)).toEqual(['finished', 'failed', 'finished']);

    // A fresh socket that dies the same way is a failure, not a loop.
    const cold = synthesizer();
    server.failNext({ at: 'run-task', kind: 'drop' });
    const { error } = await drain(cold.stream('好的。', VOICE, { sampleRate: 8000 }));
    expect(providerFailure(error).kind).toBe('network');
  });

  it('explains a wrong model, a refused voice and an unreachable or malformed address', async () => {
    const model = await drain(
      synthesizer({ model: 'sambert-v1' }).stream('好的。', VOICE, { sampleRate: 8000 }),
    );
    const notFound = providerFailure(model.error);
    expect(notFound.kind).toBe('not_found');
    expect(notFound.message).toContain('sambert-v1');
    expect(notFound.message).toContain('语音配置中的模型');

    const voice = await drain(
      synthesizer().stream('好的。', { ...VOICE, voiceId: '' }, { sampleRate: 8000 }),
    );
    const refused = providerFailure(voice.error);
    expect(refused.kind).toBe('bad_request');
    expect(refused.message).toContain('音色');

    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = await drain(
      synthesizer({ url: `ws://127.0.0.1:${port}/api-ws/v1/inference` }).stream('好的。', VOICE, {
        sampleRate: 8000,
      }),
    );
    const network = providerFailure(unreachable.error);
    expect(network.kind).toBe('network');
    expect(network.message).toContain('语音配置中的服务地址');

    expect(() => createCosyVoiceSynthesizer({ apiKey: KEY, url: 'https://dashscope.aliyuncs.com' })).toThrow(
      /服务地址/,
    );
  });

  it('yields nothing and connects nowhere for empty text', async () => {
    const audio = await collectSynthesis(synthesizer().stream('  ', VOICE, { sampleRate: 8000 }));
    expect(audio.length).toBe(0);
    expect(server.connections).toBe(0);
  });

  it('maps the documented error codes', () => {
    expect(taskFailure('Throttling.AllocationQuota', '', KEY, 'cosyvoice-v2').kind).toBe('rate_limit');
    expect(
      taskFailure('Arrearage', 'Access denied, please make sure your account is in good standing.', KEY, 'm')
        .kind,
    ).toBe('auth');
    expect(taskFailure('Model.AccessDenied', '', KEY, 'cosyvoice-v2').message).toContain('cosyvoice-v2');
    expect(taskFailure('DataInspectionFailed', '', KEY, 'm').kind).toBe('bad_request');
    expect(taskFailure('CLIENT_ERROR', 'request timeout after 23 seconds.', KEY, 'm').kind).toBe('timeout');
    expect(taskFailure('InternalError', `oops ${KEY}`, KEY, 'm').message).not.toContain(KEY);
  });

  it('sends long text in pieces the API accepts', () => {
    const long = '话'.repeat(2500);
    const pieces = textPieces(long);
    expect(pieces.join('')).toBe(long);
    expect(pieces.every((piece) => piece.length <= 1000)).toBe(true);
  });
});

describe('the fake DashScope server itself', () => {
  /** A raw client, so the fake's rules are checked without the synthesizer's help. */
  async function rawTask(parameters: Record<string, unknown>) {
    const ws = new WebSocket(server.url, { headers: { Authorization: `Bearer ${KEY}` } });
    const events: { header: Record<string, string> }[] = [];
    const closed = new Promise<void>((resolve) => ws.on('close', () => resolve()));
    ws.on('message', (data, isBinary) => {
      if (!isBinary) events.push(JSON.parse(data.toString()));
    });
    await new Promise<void>((resolve) => ws.on('open', () => resolve()));
    ws.send(
      JSON.stringify({
        header: { action: 'run-task', task_id: 'a'.repeat(32), streaming: 'duplex' },
        payload: {
          task_group: 'audio',
          task: 'tts',
          function: 'SpeechSynthesizer',
          model: 'cosyvoice-v2',
          parameters: { text_type: 'PlainText', voice: 'longxiaochun_v2', format: 'pcm', ...parameters },
          input: {},
        },
      }),
    );
    return { ws, events, closed };
  }

  it('fails a task whose text does not come within the idle limit (the 23 s rule)', async () => {
    server.set({ taskIdleMs: 80 });
    const { events, closed } = await rawTask({ sample_rate: 8000 });
    await closed;
    expect(events.map((e) => e.header.event)).toEqual(['task-started', 'task-failed']);
    expect(events[1]?.header.error_code).toBe('CLIENT_ERROR');
    expect(events[1]?.header.error_message).toMatch(/request timeout after/);
  });

  it('refuses an unknown sample rate or format with task-failed InvalidParameter', async () => {
    for (const parameters of [{ sample_rate: 11025 }, { sample_rate: 8000, format: 'flac' }]) {
      const { events, closed } = await rawTask(parameters);
      await closed;
      expect(events.map((e) => e.header.event)).toEqual(['task-failed']);
      expect(events[0]?.header.error_code).toBe('InvalidParameter');
    }
  });
});
