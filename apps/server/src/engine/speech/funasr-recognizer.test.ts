import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ProviderError } from '../brain/openai-client';
import { VirtualClock } from '../clock';
import { createFunAsrRecognizer, type FunAsrRecognizerOptions, funAsrHotwords } from './funasr-recognizer';
import {
  type FunAsrServer,
  type FunAsrServerOptions,
  saysWhenLoud,
  startFunAsrServer,
} from './testing/funasr-server';
import type { TelephonyUtterance } from './types';

const TOKEN = 'funasr-proxy-token-abcdefghijklmnop';

/** A 440 Hz tone of `ms` at 8 kHz: loud, and distinct samples, so a reordered or cut stream shows. */
function tone(ms: number): TelephonyUtterance {
  const pcm = new Int16Array((ms * 8000) / 1000);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return { pcm, sampleRate: 8000 };
}

/** `pcm` cut into the media loop's 20 ms frames. */
const frames = (pcm: Int16Array) =>
  Array.from({ length: Math.ceil(pcm.length / 160) }, (_, i) => pcm.subarray(i * 160, (i + 1) * 160));

let server: FunAsrServer;
const start = async (options: FunAsrServerOptions = {}) => {
  server = await startFunAsrServer(options);
  return server;
};
afterEach(() => server?.close());

const recognizer = (over: Partial<FunAsrRecognizerOptions> = {}) =>
  createFunAsrRecognizer({ url: server.url, ...over });

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
  expect(inspect(provider, { depth: 5 })).not.toContain(TOKEN);
  expect(JSON.stringify(provider)).not.toContain(TOKEN);
  return provider;
}

describe('FunASR recognizer: transcribe', () => {
  it('sends the whole utterance at once in offline mode, as 8 kHz PCM, and returns the final text', async () => {
    await start();
    server.listen((heard) =>
      heard.final && heard.pcm.length === 9600 && heard.sampleRate === 8000
        ? ' 我想了解一下宽带套餐。 '
        : '听错了',
    );
    const utterance = tone(1200);
    const begun = performance.now();
    const transcript = await recognizer().transcribe(utterance, { language: 'zh' });

    expect(transcript).toEqual({ text: '我想了解一下宽带套餐。', durationMs: 1200 });
    // Offline mode takes the recorded utterance faster than real time: no waiting 1.2 s.
    expect(performance.now() - begun).toBeLessThan(1000);
    const [session] = server.sessions;
    expect(session?.config).toEqual({
      mode: 'offline',
      chunk_size: [5, 10, 5],
      chunk_interval: 10,
      wav_name: 'callpilot',
      wav_format: 'pcm',
      audio_fs: 8000,
      is_speaking: true,
      itn: true,
    });
    expect(session?.texts.at(-1)).toEqual({ is_speaking: false });
    // 60 ms chunks (chunk_size[1] * 60 / chunk_interval) of 16-bit samples.
    expect(session?.frames).toEqual(Array(20).fill(960));
    // The client closes once the final arrived, as FunASR's own clients do.
    expect(await session?.closed).toEqual({ code: 1000, byServer: false });
  });

  it('sends the hotwords as the JSON string of {word: weight}, and itn as configured', async () => {
    await start();
    server.listen(({ hotwords }) => (hotwords.天翼 === 30 && hotwords.宽带 === 20 ? '天翼宽带' : '听错了'));
    const transcript = await recognizer({ hotwords: { 天翼: 30 }, itn: false }).transcribe(tone(200), {
      language: 'zh',
      prompt: '宽带 套餐、天翼',
    });
    expect(transcript.text).toBe('天翼宽带');
    const config = server.sessions[0]?.config;
    expect(config?.hotwords).toBe('{"宽带":20,"套餐":20,"天翼":30}');
    expect(config?.itn).toBe(false);
    expect(funAsrHotwords(undefined)).toBe('');
    expect(funAsrHotwords('', { 宽带: Number.NaN, 套餐: 12.6 })).toBe('{"套餐":13}');
  });

  it('asks nothing for an empty utterance, and answers empty text when no speech was heard', async () => {
    await start({ listen: saysWhenLoud('你好') });
    const asr = recognizer();
    expect(await asr.transcribe({ pcm: new Int16Array(0), sampleRate: 8000 }, { language: 'zh' })).toEqual({
      text: '',
      durationMs: 0,
    });
    expect(server.sessions).toHaveLength(0);
    const silence = await asr.transcribe({ pcm: new Int16Array(1600), sampleRate: 8000 }, { language: 'zh' });
    expect(silence).toEqual({ text: '', durationMs: 200 });
    // The final result without speech has no mode: is_final alone ends the recognition.
    expect(server.sessions[0]?.results).toEqual([
      { wav_name: 'callpilot', text: '', timestamp: '[[0,200]]', is_final: true },
    ]);
  });

  it('takes the offline file server’s single result (mode offline, is_final false) as the end', async () => {
    await start({ fileServer: true, listen: saysWhenLoud('您好，请讲。') });
    expect((await recognizer().transcribe(tone(300), { language: 'zh' })).text).toBe('您好，请讲。');
  });

  it('gives up after the timeout on its clock, not before', async () => {
    await start({ listen: saysWhenLoud('你好') });
    server.finalDelay('never');
    const clock = new VirtualClock();
    let settled = false;
    const pending = recognizer({ clock, timeoutMs: 3000 }).transcribe(tone(200), { language: 'zh' });
    const settle = () => {
      settled = true;
    };
    pending.then(settle, settle);
    await server.connected(1);
    await clock.advance(2999);
    expect(settled).toBe(false);
    await clock.advance(1);
    const err = await failure(pending);
    expect(err.kind).toBe('timeout');
    expect(err.message).toBe('语音识别服务响应超时（超过 3 秒），请稍后再试');
    await server.sessions[0]?.closed;
  });

  it('stops when the caller hangs up, rejecting with the signal’s reason', async () => {
    await start();
    server.finalDelay('never');
    const hangUp = new AbortController();
    const pending = recognizer().transcribe(tone(200), { language: 'zh', signal: hangUp.signal });
    await server.connected(1);
    const reason = new Error('caller hung up');
    hangUp.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect((await server.sessions[0]?.closed)?.byServer).toBe(false);
  });

  it('maps an unreachable server and a non-websocket address to Chinese errors naming the profile', async () => {
    await start();
    const unreachable = await failure(
      createFunAsrRecognizer({ url: 'ws://127.0.0.1:9' }).transcribe(tone(100), { language: 'zh' }),
    );
    expect(unreachable.kind).toBe('network');
    expect(unreachable.message).toBe(
      '无法连接语音识别服务（FunASR），请检查语音识别配置中的服务地址是否正确、服务是否已启动',
    );
    expect(() => createFunAsrRecognizer({ url: 'http://127.0.0.1:10095' })).toThrow(/ws:\/\/ 或 wss:\/\//);
  });
});

describe('FunASR recognizer: auth through a proxy', () => {
  it('sends the token as a bearer on the upgrade, and a refused token is an auth error without the token', async () => {
    await start({ token: TOKEN, listen: saysWhenLoud('你好') });
    expect((await recognizer({ token: TOKEN }).transcribe(tone(200), { language: 'zh' })).text).toBe('你好');
    expect(server.sessions[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);

    const wrong = `${TOKEN}-old`;
    const refused = await failure(recognizer({ token: wrong }).transcribe(tone(200), { language: 'zh' }));
    expect(refused.kind).toBe('auth');
    expect(refused.upstreamStatus).toBe(401);
    expect(refused.message).toBe(
      '语音识别服务（FunASR）拒绝了访问令牌（HTTP 401），请检查语音识别配置中的访问令牌',
    );
    expect(inspect(refused, { depth: 5 })).not.toContain(wrong);

    const missing = await failure(
      recognizer().openSession?.({ language: 'zh' }).finish() as Promise<unknown>,
    );
    expect(missing.kind).toBe('auth');
    expect(missing.message).toBe(
      '语音识别服务（FunASR）要求身份验证（HTTP 401），请在语音识别配置中填写访问令牌',
    );
    expect(server.sessions).toHaveLength(1);
  });
});

describe('FunASR recognizer: streaming session', () => {
  it('streams 2pass: partials as the caller speaks, corrected sentences, then the final', async () => {
    await start();
    // Decode steps of 300 ms (chunk_size [5, 5, 5]): the first sentence ends after the first step.
    server.listen(({ pcm, final }) => {
      const ms = pcm.length / 8;
      if (final) return ['你好。', '我想办理宽带。'];
      if (ms <= 300) return '你好';
      return ['你好。', ms <= 600 ? '我想' : '我想办宽带'];
    });
    const session = recognizer({ chunkSize: [5, 5, 5] }).openSession?.({ language: 'zh' });
    if (!session) throw new Error('FunASR opens sessions');
    const partials: string[] = [];
    session.onPartial((text) => partials.push(text));
    for (const frame of frames(tone(900).pcm)) session.write(frame);
    const transcript = await session.finish();

    expect(transcript).toEqual({ text: '你好。我想办理宽带。', durationMs: 900 });
    expect(partials).toEqual(['你好', '你好。', '你好。我想', '你好。我想办宽带', '你好。我想办理宽带。']);
    const [heard] = server.sessions;
    expect(heard?.config).toMatchObject({ mode: '2pass', audio_fs: 8000, chunk_size: [5, 5, 5] });
    // 30 ms chunks: chunk_size[1] * 60 / chunk_interval.
    expect(heard?.frames).toEqual(Array(30).fill(480));
    expect(heard?.results.map((r) => [r.mode, r.is_final])).toEqual([
      ['2pass-online', false],
      ['2pass-offline', false],
      ['2pass-online', false],
      ['2pass-online', false],
      ['2pass-offline', true],
    ]);
  });

  it('streams online mode: the final is every increment joined', async () => {
    await start();
    server.listen(({ pcm }) => (pcm.length / 8 < 300 ? '' : pcm.length / 8 < 600 ? '喂' : '喂你好'));
    const session = recognizer({ mode: 'online', chunkSize: [5, 5, 5] }).openSession?.({
      language: 'zh',
      prompt: '宽带',
    });
    if (!session) throw new Error('FunASR opens sessions');
    const partials: string[] = [];
    session.onPartial((text) => partials.push(text));
    for (const frame of frames(tone(750).pcm)) session.write(frame);
    expect(await session.finish()).toEqual({ text: '喂你好', durationMs: 750 });
    expect(partials).toEqual(['喂', '喂你好']);
    expect(server.sessions[0]?.config).toMatchObject({ mode: 'online', hotwords: '{"宽带":20}' });
  });

  it('sends the pre-roll at once, then paces at real time, so a server that checks the rate never complains', async () => {
    await start({ listen: saysWhenLoud('你好'), realTimeToleranceMs: 700 });
    const session = recognizer().openSession?.({ language: 'zh' });
    if (!session) throw new Error('FunASR opens sessions');
    const begun = performance.now();
    // 1.8 s of audio handed over at once, as a leg catching up after a stall would.
    for (const frame of frames(tone(1800).pcm)) session.write(frame);
    expect((await session.finish()).text).toBe('你好');
    // 30 chunks of 60 ms: the first 600 ms at once, the rest at real time.
    expect(performance.now() - begun).toBeGreaterThanOrEqual(1800 - 600 - 60);
    const [heard] = server.sessions;
    expect(heard?.frames).toEqual(Array(30).fill(960));
    expect(heard?.maxLeadMs).toBeGreaterThanOrEqual(500);
    expect(heard?.maxLeadMs).toBeLessThanOrEqual(700);
  });

  it('the fake refuses a streaming client that sends faster than real time', async () => {
    await start({ listen: saysWhenLoud('你好') });
    const ws = new WebSocket(server.url);
    await new Promise((resolve) => ws.once('open', resolve));
    const answers: Record<string, unknown>[] = [];
    ws.on('message', (data) => answers.push(JSON.parse(data.toString())));
    ws.send(
      JSON.stringify({
        mode: '2pass',
        chunk_size: [5, 10, 5],
        chunk_interval: 10,
        wav_name: 'fast',
        wav_format: 'pcm',
        audio_fs: 8000,
        is_speaking: true,
      }),
    );
    const audio = tone(1200).pcm;
    for (let at = 0; at < audio.length; at += 480) {
      const chunk = audio.subarray(at, at + 480);
      ws.send(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    }
    const closed = await new Promise<number>((resolve) => ws.once('close', resolve));
    expect(closed).toBe(1011);
    expect(answers.at(-1)?.error).toMatch(/ahead of real time/);
  });

  it('fails clearly when the server closes an idle connection', async () => {
    await start({ listen: saysWhenLoud('你好'), idleTimeoutMs: 150 });
    const session = recognizer().openSession?.({ language: 'zh' });
    if (!session) throw new Error('FunASR opens sessions');
    session.write(tone(100).pcm);
    await server.connected(1);
    const closed = await server.sessions[0]?.closed;
    expect(closed).toEqual({ code: 1001, byServer: true });
    const err = await failure(session.finish());
    expect(err.kind).toBe('upstream');
    expect(err.message).toBe(
      '语音识别服务（FunASR）在识别完成前断开了连接（关闭码 1001），可能是长时间没有收到音频（空闲超时）或服务重启，请检查 FunASR 服务',
    );
  });

  it('fails with a ProviderError when the server reports an error mid-stream', async () => {
    await start({ listen: saysWhenLoud('你好') });
    server.failMidStream({ afterAudioMs: 300, how: 'error' });
    const session = recognizer({ token: TOKEN }).openSession?.({ language: 'zh' });
    if (!session) throw new Error('FunASR opens sessions');
    for (const frame of frames(tone(600).pcm)) session.write(frame);
    await server.connected(1);
    await server.sessions[0]?.closed;
    const err = await failure(session.finish());
    expect(err.kind).toBe('upstream');
    expect(err.message).toBe(
      '语音识别服务（FunASR）识别出错：online inference failed: CUDA error: out of memory，请检查 FunASR 服务日志',
    );
  });

  it('fails with a ProviderError when the server drops the connection mid-stream', async () => {
    await start({ listen: saysWhenLoud('你好') });
    server.failMidStream({ afterAudioMs: 300, how: 'drop' });
    const session = recognizer().openSession?.({ language: 'zh' });
    if (!session) throw new Error('FunASR opens sessions');
    for (const frame of frames(tone(600).pcm)) session.write(frame);
    await server.connected(1);
    await server.sessions[0]?.closed;
    const err = await failure(session.finish());
    expect(err.kind).toBe('upstream');
    expect(err.message).toContain('在识别完成前断开了连接（关闭码 1006）');
  });

  it('abort() closes the socket and the session gives no result', async () => {
    await start({ listen: saysWhenLoud('你好') });
    const session = recognizer().openSession?.({ language: 'zh' });
    if (!session) throw new Error('FunASR opens sessions');
    session.write(tone(100).pcm);
    await server.connected(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    session.abort();
    expect(await server.sessions[0]?.closed).toEqual({ code: 1000, byServer: false });
    await expect(session.finish()).rejects.toMatchObject({ name: 'AbortError' });
    expect(server.sessions[0]?.ended).toBe(false);
  });
});
