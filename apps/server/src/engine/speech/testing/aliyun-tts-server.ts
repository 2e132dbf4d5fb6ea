import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { FakeAliyunNls, NlsMessage } from './aliyun-nls-server';
import { fakeSpeech, pcmBytes, splitFrames } from './fake-speech';

/**
 * Test support: a local stand-in for Aliyun's NLS gateway speaking streaming-text synthesis
 * (namespace FlowingSpeechSynthesizer), as help.aliyun.com "流式文本语音合成 WebSocket协议说明" and
 * the official SDKs (nls/stream_input_tts.py, the C++ SDK's flowingSynthesizer*) describe it.
 *
 * Tokens come from the CreateToken half of `startFakeAliyunNls` (which verifies the POP signature):
 * this gateway accepts exactly the tokens that one issued, from the `X-NLS-Token` header or the
 * `token` query parameter; an unknown one is refused at the handshake with 403, an expired one
 * with TaskFailed 40000001 at StartSynthesis.
 *
 * The task: StartSynthesis (voice, format, sample_rate, volume 0~100, speech_rate / pitch_rate
 * -500~500, checked) → SynthesisStarted; RunSynthesis `{text}` any number of times; StopSynthesis →
 * SentenceBegin, binary PCM frames (the text "spoken" by `fakeSpeech`, `msPerChar` per character at
 * the requested rate), SentenceSynthesis after the first frame, SentenceEnd, SynthesisCompleted.
 * Rules, with small configurable values: the idle rule (TaskFailed 40000004 when the client sends
 * no directive for `idleTimeoutMs` before StopSynthesis; the service's is 10 s), the account's
 * concurrency (TaskFailed 40000005 past `maxConcurrent` running tasks), and a client that keeps the
 * socket after SynthesisCompleted is cut off after `idleTimeoutMs` (recorded as `lingered`).
 */

export interface AliyunTtsFault {
  /** Strike once this many audio frames went out. */
  afterFrames: number;
  /** TaskFailed with this status and text; without them the socket is dropped (no close frame). */
  status?: number;
  statusText?: string;
}

export interface AliyunTtsTuning {
  /** Audio per character of text. */
  msPerChar: number;
  /** Audio per binary frame. */
  frameMs: number;
  /** Wall time between two frames. */
  frameIntervalMs: number;
  /** Wall time from StopSynthesis to the first frame. */
  firstAudioDelayMs: number;
  /** Cut frames in the middle of samples. */
  oddFrames: boolean;
}

export interface FakeAliyunTtsOptions extends Partial<AliyunTtsTuning> {
  /** The CreateToken side; its tokens are the ones accepted here. */
  nls: FakeAliyunNls;
  /** The project's appkey; any other gets 40020105. */
  appKey?: string;
  /** Voices the account may use; any other gets 40000003 Invalid voice name. */
  voices?: readonly string[];
  idleTimeoutMs?: number;
  maxConcurrent?: number;
  /** Time for token expiry (default Date.now). */
  now?: () => number;
}

export interface AliyunTtsSession {
  token: string;
  tokenVia: 'header' | 'query';
  /** Every text message the client sent, parsed. */
  received: NlsMessage[];
  /** Every event this server sent. */
  sent: NlsMessage[];
  /** Audio frames sent so far, and how many the task has in all (0 until StopSynthesis). */
  framesSent: number;
  framesTotal: number;
  audioBytes: number;
  failure?: { status: number; statusText: string };
  /** The client closed before SynthesisCompleted. */
  clientLeftEarly: boolean;
  /** The client kept the socket open after SynthesisCompleted until the server cut it. */
  lingered: boolean;
  closed: boolean;
}

export interface FakeAliyunTts {
  /** `ws://127.0.0.1:<port>/ws/v1`: a profile's gateway URL. */
  gatewayUrl: string;
  sessions: AliyunTtsSession[];
  /** Changes how tasks started from now on sound and pace. */
  tune(tuning: Partial<AliyunTtsTuning>): void;
  /** Makes tasks started from now on fail mid-stream. */
  fault(fault: AliyunTtsFault | null): void;
  /** Resolves when `count` sessions have closed in all. */
  closedSessions(count: number): Promise<void>;
  close(): Promise<void>;
}

const NAMESPACE = 'FlowingSpeechSynthesizer';
const HEX32 = /^[0-9a-f]{32}$/;
const hex32 = () => randomBytes(16).toString('hex');
const SAMPLE_RATES = new Set([8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000]);
const DEFAULT_VOICES = ['xiaoyun', 'xiaogang', 'ruoxi', 'siqi', 'sijia', 'aixia', 'zhixiaobai', 'zhixiaoxia'];
const isInt = (value: unknown, min: number, max: number) =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;

export async function startFakeAliyunTts(options: FakeAliyunTtsOptions): Promise<FakeAliyunTts> {
  const { nls } = options;
  const now = options.now ?? Date.now;
  const voices = new Set(options.voices ?? DEFAULT_VOICES);
  const idleTimeoutMs = options.idleTimeoutMs ?? 10_000;
  const maxConcurrent = options.maxConcurrent ?? 20;
  let tuning: AliyunTtsTuning = {
    msPerChar: options.msPerChar ?? 30,
    frameMs: options.frameMs ?? 20,
    frameIntervalMs: options.frameIntervalMs ?? 2,
    firstAudioDelayMs: options.firstAudioDelayMs ?? 0,
    oddFrames: options.oddFrames ?? false,
  };
  let fault: AliyunTtsFault | null = null;
  let running = 0;
  const sessions: AliyunTtsSession[] = [];
  const closeWaiters: { count: number; resolve: () => void }[] = [];

  const wss = new WebSocketServer({ noServer: true });

  const serve = (ws: WebSocket, record: AliyunTtsSession) => {
    let state: 'init' | 'started' | 'synthesizing' | 'completed' | 'done' = 'init';
    let taskId = '';
    let counted = false;
    let text = '';
    let lastDirective = '';
    let start: Record<string, unknown> = {};
    const taskTuning = { ...tuning };
    const taskFault = fault;
    const timers = new Set<NodeJS.Timeout>();
    const later = (ms: number, fn: () => void) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        fn();
      }, ms);
      timers.add(timer);
      return timer;
    };
    const stopTimers = () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    };
    const release = () => {
      if (counted) running--;
      counted = false;
    };

    const send = (
      name: string,
      payload?: Record<string, unknown>,
      status = 20000000,
      statusText?: string,
    ) => {
      const message: NlsMessage = {
        header: {
          namespace: name === 'TaskFailed' ? 'Default' : NAMESPACE,
          name,
          status,
          message_id: hex32(),
          task_id: taskId,
          status_text: statusText ?? 'Gateway:SUCCESS:Success.',
        },
        ...(payload ? { payload } : {}),
      };
      record.sent.push(message);
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
    };

    const fail = (status: number, statusText: string) => {
      if (state === 'done') return;
      state = 'done';
      record.failure = { status, statusText };
      stopTimers();
      release();
      send('TaskFailed', undefined, status, statusText);
      ws.close(1000);
    };

    let idle: NodeJS.Timeout | undefined;
    const armIdle = () => {
      if (idle) clearTimeout(idle);
      timers.delete(idle as NodeJS.Timeout);
      idle = later(idleTimeoutMs, () => {
        if (state === 'completed') {
          // The client was told to close and did not.
          record.lingered = true;
          state = 'done';
          ws.close(1000);
          return;
        }
        fail(
          40000004,
          `Gateway:IDLE_TIMEOUT:Websocket session is idle for too long time, the last directive is '${lastDirective || 'None'}'!`,
        );
      });
    };
    armIdle();

    const synthesize = () => {
      const rate = start.sample_rate as number;
      const bytes = pcmBytes(fakeSpeech(text, rate, taskTuning.msPerChar));
      const frameBytes = Math.max(2, Math.round((rate / 1000) * 2 * taskTuning.frameMs));
      const frames = splitFrames(bytes, frameBytes, taskTuning.oddFrames);
      record.framesTotal = frames.length;
      const subtitle = { text, begin_time: 0, end_time: Math.round([...text].length * taskTuning.msPerChar) };
      const next = (i: number) => {
        if (state !== 'synthesizing') return;
        if (taskFault && i === taskFault.afterFrames) {
          if (taskFault.status === undefined) {
            state = 'done';
            stopTimers();
            release();
            ws.terminate();
            return;
          }
          return fail(taskFault.status, taskFault.statusText ?? '');
        }
        if (i === frames.length) {
          send('SentenceEnd', { subtitles: [{ ...subtitle, sentence: true }] });
          send('SynthesisCompleted');
          state = 'completed';
          release();
          armIdle();
          return;
        }
        const frame = frames[i] as Buffer;
        if (ws.readyState === ws.OPEN) ws.send(frame, { binary: true });
        record.framesSent = i + 1;
        record.audioBytes += frame.length;
        if (i === 0) send('SentenceSynthesis', { subtitles: [{ ...subtitle, sentence: false }] });
        later(taskTuning.frameIntervalMs, () => next(i + 1));
      };
      later(taskTuning.firstAudioDelayMs, () => {
        if (state !== 'synthesizing') return;
        send('SentenceBegin', { index: 1 });
        next(0);
      });
    };

    const directive = (message: NlsMessage) => {
      const { header } = message;
      const payload = (message.payload ?? {}) as Record<string, unknown>;
      lastDirective = header?.name ?? '';
      if (header?.namespace !== NAMESPACE) {
        return fail(40010001, `Gateway:NAMESPACE_NOT_FOUND:Namespace '${header?.namespace}' not found!`);
      }
      if (!HEX32.test(header.message_id ?? '') || !HEX32.test(header.task_id ?? '')) {
        return fail(40000002, `Gateway:MESSAGE_INVALID:Invalid message id '${header.message_id}'!`);
      }
      if (header.name === 'StartSynthesis') {
        if (state !== 'init')
          return fail(40000002, `Gateway:MESSAGE_INVALID:Can't process message in state '${state}'!`);
        taskId = header.task_id;
        const appkey = header.appkey ?? '';
        if (!appkey) return fail(40000003, 'Gateway:PARAMETER_INVALID:appkey not set');
        if (options.appKey !== undefined && appkey !== options.appKey) {
          return fail(40020105, 'Meta:APPKEY_NOT_EXIST:Appkey not exist!');
        }
        const expiry = nls.tokenExpiresAt(record.token);
        if (expiry === undefined || expiry <= now()) {
          return fail(40000001, `Meta:ACCESS_DENIED:The token '${record.token}' is invalid!`);
        }
        if (running >= maxConcurrent) return fail(40000005, 'Gateway:TOO_MANY_REQUESTS:Too many requests!');
        start = {
          voice: 'xiaoyun',
          format: 'pcm',
          sample_rate: 16000,
          volume: 50,
          speech_rate: 0,
          pitch_rate: 0,
          ...payload,
        };
        if (typeof start.voice !== 'string' || !voices.has(start.voice)) {
          return fail(40000003, `Gateway:PARAMETER_INVALID:Invalid voice name '${String(start.voice)}'!`);
        }
        if (!['pcm', 'wav', 'mp3'].includes(start.format as string)) {
          return fail(40010003, `Gateway:DIRECTIVE_INVALID:Invalid format '${String(start.format)}'!`);
        }
        if (!SAMPLE_RATES.has(start.sample_rate as number)) {
          return fail(
            40000003,
            `Gateway:PARAMETER_INVALID:Invalid sample rate '${String(start.sample_rate)}'!`,
          );
        }
        for (const [name, min, max] of [
          ['volume', 0, 100],
          ['speech_rate', -500, 500],
          ['pitch_rate', -500, 500],
        ] as const) {
          if (!isInt(start[name], min, max)) {
            return fail(40000003, `Gateway:PARAMETER_INVALID:Invalid ${name} '${String(start[name])}'!`);
          }
        }
        counted = true;
        running++;
        state = 'started';
        send('SynthesisStarted', { session_id: hex32(), index: 1 });
        return;
      }
      if (header.task_id !== taskId) return fail(40000002, 'Gateway:MESSAGE_INVALID:task_id mismatch!');
      if (header.name === 'RunSynthesis') {
        if (state !== 'started')
          return fail(40000002, `Gateway:MESSAGE_INVALID:Can't process message in state '${state}'!`);
        if (typeof payload.text !== 'string' || !payload.text) {
          return fail(40010003, 'Gateway:DIRECTIVE_INVALID:No text specified!');
        }
        text += payload.text;
        return;
      }
      if (header.name === 'StopSynthesis') {
        if (state !== 'started')
          return fail(40000002, `Gateway:MESSAGE_INVALID:Can't process message in state '${state}'!`);
        if (!text) return fail(40010003, 'Gateway:DIRECTIVE_INVALID:No text specified!');
        state = 'synthesizing';
        if (idle) clearTimeout(idle);
        synthesize();
        return;
      }
      return fail(40010003, `Gateway:DIRECTIVE_INVALID:Unknown directive '${header.name}'!`);
    };

    ws.on('message', (data, isBinary) => {
      if (state === 'done') return;
      const buffer = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary)
        return fail(40000002, `Gateway:MESSAGE_INVALID:Can't process binary data in state '${state}'!`);
      let message: NlsMessage;
      try {
        message = JSON.parse(buffer.toString('utf8')) as NlsMessage;
      } catch {
        return fail(40000002, 'Gateway:MESSAGE_INVALID:Invalid json message!');
      }
      record.received.push(message);
      if (state === 'init' || state === 'started') armIdle();
      directive(message);
    });
    ws.on('close', () => {
      stopTimers();
      release();
      record.clientLeftEarly = state !== 'done' && state !== 'completed';
      state = 'done';
      record.closed = true;
      const closed = sessions.filter((s) => s.closed).length;
      for (const waiter of closeWaiters.splice(0)) {
        if (closed >= waiter.count) waiter.resolve();
        else closeWaiters.push(waiter);
      }
    });
  };

  const refuse = (socket: Duplex, status: number, reason: string) => {
    const body = JSON.stringify({ status, message: reason });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };

  const server = http.createServer((_req, res) => {
    res.writeHead(404).end();
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/ws/v1') return refuse(socket, 404, 'Not Found');
    const header = req.headers['x-nls-token'];
    const fromHeader = typeof header === 'string' ? header : undefined;
    const token = fromHeader ?? url.searchParams.get('token') ?? '';
    if (!token || nls.tokenExpiresAt(token) === undefined) return refuse(socket, 403, 'Forbidden');
    wss.handleUpgrade(req, socket, head, (ws) => {
      const record: AliyunTtsSession = {
        token,
        tokenVia: fromHeader ? 'header' : 'query',
        received: [],
        sent: [],
        framesSent: 0,
        framesTotal: 0,
        audioBytes: 0,
        clientLeftEarly: false,
        lingered: false,
        closed: false,
      };
      sessions.push(record);
      serve(ws, record);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    gatewayUrl: `ws://127.0.0.1:${port}/ws/v1`,
    sessions,
    tune(next) {
      tuning = { ...tuning, ...next };
    },
    fault(next) {
      fault = next;
    },
    closedSessions(count) {
      if (sessions.filter((s) => s.closed).length >= count) return Promise.resolve();
      return new Promise<void>((resolve) => closeWaiters.push({ count, resolve }));
    },
    close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
