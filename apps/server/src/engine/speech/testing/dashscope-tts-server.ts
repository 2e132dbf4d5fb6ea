import { randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type RawData, WebSocket, WebSocketServer } from 'ws';

/**
 * Test support: a local server speaking DashScope's CosyVoice WebSocket API (百炼 "语音合成CosyVoice
 * WebSocket API", help.aliyun.com/zh/model-studio/cosyvoice-websocket-api, and "CosyVoice服务端事件")
 * the way the real service behaves, checked against the official Python SDK
 * (dashscope/dashscope-sdk-python 1.26.2, dashscope/audio/tts_v2/speech_synthesizer.py and
 * dashscope/protocol/websocket.py):
 *
 * - The key is checked at the handshake: `Authorization: bearer <key>` (the scheme in any case, as
 *   the docs write `bearer` and the SDK `Bearer`); a missing or wrong key is refused with HTTP 401
 *   and DashScope's JSON error body `{code: "InvalidApiKey", message, request_id}`. Older gateways
 *   accepted the upgrade and failed the first task instead; `authFailure: 'task-failed'` does that.
 * - run-task (header action/task_id/streaming "duplex"; payload task_group "audio", task "tts",
 *   function "SpeechSynthesizer", model, parameters, input {}) → task-started; continue-task texts
 *   are cut into sentences and each complete one is synthesised at once, the rest at finish-task;
 *   each sentence is result-generated sentence-begin, then per audio frame a sentence-synthesis
 *   event followed by one binary frame, then sentence-end with usage.characters (汉字 count 2);
 *   then task-finished. A bad field is refused with task-failed InvalidParameter; a task-failed
 *   always closes the connection ("此时这个连接无法继续复用").
 * - Rules, with small configurable values for tests: at most `maxConcurrentTasks` tasks at once
 *   across connections (task-failed Throttling.RateQuota); no continue-task or finish-task within
 *   `taskIdleMs` after task-started or the last text (the 23 s rule: task-failed CLIENT_ERROR
 *   "request timeout after 23 seconds."); a connection without a new run-task `connectionIdleMs`
 *   after its last task (60 s) is closed.
 * - A run-task while a task runs on the same connection ends the old task silently, as the docs'
 *   任务中断方式 table says; `tasks[i].state` then reads 'superseded'.
 *
 * Audio is made from the text, deterministically (`dashScopeTone`): a tone per character,
 * `msPerChar` / rate long, its amplitude following the volume, at the requested sample rate, so a
 * test can compare the exact samples a client yields. Only format 'pcm' is rendered.
 */

export interface DashScopeTtsServerOptions {
  apiKey: string;
  /** How a wrong or missing key is refused (default 'handshake': HTTP 401). */
  authFailure?: 'handshake' | 'task-failed';
  /** Audio per character at rate 1 (default 60 ms). */
  msPerChar?: number;
  /** Audio per binary frame (default 100 ms). */
  frameMs?: number;
  /** Cut frames at odd byte offsets (every other boundary one byte late), as a network may. */
  oddFrames?: boolean;
  /** Wait before the first audio frame of a task (default 0). */
  firstAudioDelayMs?: number;
  /** Wait between audio frames (default 0). */
  interFrameDelayMs?: number;
  /** Tasks running at once across all connections before Throttling (default 10). */
  maxConcurrentTasks?: number;
  /** The text wait after task-started or the last continue-task (DashScope: 23 s). */
  taskIdleMs?: number;
  /** A connection with no new run-task this long after its last task is closed (DashScope: 60 s). */
  connectionIdleMs?: number;
}

export type DashScopeFault =
  /** The connection drops (no close frame) as the next run-task arrives. */
  | { at: 'run-task'; kind: 'drop' }
  /** The next task fails after `afterFrames` audio frames: task-failed, or the connection drops. */
  | { afterFrames: number; kind: 'task-failed' | 'drop'; errorCode?: string; errorMessage?: string };

/** One task as the fake saw it. */
export interface DashScopeTask {
  /** Index of the connection it ran on (0 for the first accepted). */
  connection: number;
  taskId: string;
  model: string;
  parameters: Record<string, unknown>;
  /** Every continue-task text, in order. */
  texts: string[];
  state: 'started' | 'finished' | 'failed' | 'abandoned' | 'superseded';
  errorCode?: string;
  /** Audio frames rendered so far, and sent so far. */
  framesPlanned: number;
  framesSent: number;
  samplesSent: number;
  finishReceived: boolean;
  /**
   * Wall-clock times (performance.timeOrigin + performance.now(), comparable across processes):
   * run-task, the first text, the first audio frame and the task's end (finished, failed or the
   * client gone): what the server actually did, as a bench reports it.
   */
  at: { run: number; text?: number; firstFrame?: number; end?: number };
}

/** One accepted connection. */
export interface DashScopeConnection {
  index: number;
  headers: http.IncomingHttpHeaders;
  closedBy: 'client' | 'server' | null;
  /** Resolves when the socket is gone. */
  closed: Promise<void>;
}

export interface DashScopeTtsServer {
  /** ws://127.0.0.1:<port>/api-ws/v1/inference */
  url: string;
  /** Tasks in the order their run-task arrived (refused ones included, state 'failed'). */
  received: DashScopeTask[];
  /** Upgrades accepted so far. */
  readonly connections: number;
  /** Connections open now. */
  readonly openConnections: number;
  /** Upgrades refused for their key. */
  readonly refusedUpgrades: number;
  sockets: DashScopeConnection[];
  /** Changes options for tasks started from now on. */
  set(options: Partial<Omit<DashScopeTtsServerOptions, 'apiKey'>>): void;
  /** Makes the next task fail (once). */
  failNext(fault: DashScopeFault | null): void;
  close(): Promise<void>;
}

export const DASHSCOPE_SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;
const FORMATS = new Set(['pcm', 'wav', 'mp3', 'opus']);
const SENTENCE_END = /[。！？!?；;\n]/u;
const HAN = /\p{Script=Han}/u;
const PATH = '/api-ws/v1/inference';

/** DashScope's billing count: 汉字 two characters, everything else one. */
export function dashScopeCharacters(text: string): number {
  let count = 0;
  for (const char of text) count += HAN.test(char) ? 2 : 1;
  return count;
}

/**
 * The fake's audio for `text`: per character a sine whose pitch comes from the code point,
 * `msPerChar / rate` long, peak `volume / 100 * 12000`. Exported so tests know what to expect.
 */
export function dashScopeTone(
  text: string,
  options: { sampleRate: number; rate?: number; volume?: number; msPerChar?: number },
): Int16Array {
  const rate = options.rate ?? 1;
  const volume = options.volume ?? 50;
  const perChar = Math.round((((options.msPerChar ?? 60) / rate) * options.sampleRate) / 1000);
  const chars = [...text];
  const out = new Int16Array(perChar * chars.length);
  const peak = (volume / 100) * 12000;
  chars.forEach((char, index) => {
    const frequency = 300 + ((char.codePointAt(0) ?? 0) % 16) * 40;
    for (let i = 0; i < perChar; i++) {
      out[index * perChar + i] = Math.round(
        peak * Math.sin((2 * Math.PI * frequency * i) / options.sampleRate),
      );
    }
  });
  return out;
}

const wallClock = () => performance.timeOrigin + performance.now();

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface RunningTask {
  record: DashScopeTask;
  /** Text received but not yet a complete sentence. */
  pending: string;
  /** Rendered sentences waiting to be sent. */
  queue: { text: string; pcm: Buffer }[];
  sentenceIndex: number;
  characters: number;
  fault: DashScopeFault | null;
  sampleRate: number;
  rate: number;
  volume: number;
  stopped: boolean;
  pumping: boolean;
  firstFrameSent: boolean;
  idleTimer?: NodeJS.Timeout;
}

export async function startDashScopeTtsServer(
  options: DashScopeTtsServerOptions,
): Promise<DashScopeTtsServer> {
  const config: Required<Omit<DashScopeTtsServerOptions, 'apiKey'>> = {
    authFailure: 'handshake',
    msPerChar: 60,
    frameMs: 100,
    oddFrames: false,
    firstAudioDelayMs: 0,
    interFrameDelayMs: 0,
    maxConcurrentTasks: 10,
    taskIdleMs: 23_000,
    connectionIdleMs: 60_000,
  };
  const { apiKey, ...rest } = options;
  Object.assign(config, rest);
  const received: DashScopeTask[] = [];
  const sockets: DashScopeConnection[] = [];
  let nextFault: DashScopeFault | null = null;
  let open = 0;
  let refusedUpgrades = 0;
  const active = new Set<RunningTask>();

  const server = http.createServer((_req, res) => {
    // CosyVoice speaks only WebSocket; a plain HTTP call is refused the way the docs describe.
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ code: 'InvalidParameter', message: 'url error, please check url!' }));
  });
  const wss = new WebSocketServer({ noServer: true });
  const rawSockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    rawSockets.add(socket);
    socket.on('close', () => rawSockets.delete(socket));
  });

  const keyMatches = (header: string | undefined) => {
    const match = /^bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!match) return false;
    const given = Buffer.from(match[1] as string);
    const expected = Buffer.from(apiKey);
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  server.on('upgrade', (req, socket: Socket, head) => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname.replace(/\/+$/, '');
    if (path !== PATH) {
      const body = JSON.stringify({ code: 'NotFound', message: 'Not Found', request_id: randomUUID() });
      socket.end(
        `HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    const authorized = keyMatches(req.headers.authorization);
    if (!authorized && config.authFailure === 'handshake') {
      refusedUpgrades++;
      const body = JSON.stringify({
        code: 'InvalidApiKey',
        message: 'Invalid API-key provided.',
        request_id: randomUUID(),
      });
      socket.end(
        `HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => accept(ws, req, authorized));
  });

  function accept(ws: WebSocket, req: http.IncomingMessage, authorized: boolean) {
    let markClosed = () => {};
    const connection: DashScopeConnection = {
      index: sockets.length,
      headers: req.headers,
      closedBy: null,
      closed: new Promise<void>((resolve) => {
        markClosed = resolve;
      }),
    };
    sockets.push(connection);
    open++;
    const taskIds = new Set<string>();
    let current: RunningTask | undefined;
    let idleTimer: NodeJS.Timeout | undefined;

    const armConnectionIdle = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => closeByServer(1000), config.connectionIdleMs);
    };
    armConnectionIdle();

    const send = (body: unknown) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(body));
    };
    const closeByServer = (code: number) => {
      connection.closedBy ??= 'server';
      if (ws.readyState === WebSocket.OPEN) ws.close(code);
    };
    const drop = () => {
      connection.closedBy ??= 'server';
      ws.terminate();
    };

    const endTask = (task: RunningTask, state: DashScopeTask['state']) => {
      task.stopped = true;
      clearTimeout(task.idleTimer);
      if (task.record.state === 'started') task.record.state = state;
      task.record.at.end ??= wallClock();
      active.delete(task);
      if (current === task) current = undefined;
    };

    /** task-failed, then the connection closes: the service never reuses a failed connection. */
    const failTask = (taskId: string, errorCode: string, errorMessage: string, task?: RunningTask) => {
      if (task) {
        task.record.errorCode = errorCode;
        endTask(task, 'failed');
      }
      send({
        header: {
          task_id: taskId,
          event: 'task-failed',
          error_code: errorCode,
          error_message: errorMessage,
          attributes: {},
        },
        payload: {},
      });
      closeByServer(1000);
    };

    const refused = (header: { task_id?: unknown }, payload: Record<string, unknown>, code: string) => {
      const record: DashScopeTask = {
        connection: connection.index,
        taskId: String(header.task_id ?? ''),
        model: String(payload.model ?? ''),
        parameters: (payload.parameters as Record<string, unknown>) ?? {},
        texts: [],
        state: 'failed',
        errorCode: code,
        framesPlanned: 0,
        framesSent: 0,
        samplesSent: 0,
        finishReceived: false,
        at: { run: wallClock(), end: wallClock() },
      };
      received.push(record);
    };

    const armTaskIdle = (task: RunningTask) => {
      clearTimeout(task.idleTimer);
      task.idleTimer = setTimeout(() => {
        if (task.stopped) return;
        failTask(
          task.record.taskId,
          'CLIENT_ERROR',
          `request timeout after ${config.taskIdleMs / 1000} seconds.`,
          task,
        );
      }, config.taskIdleMs);
    };

    const render = (task: RunningTask, text: string) => {
      if (!text) return;
      const pcm = dashScopeTone(text, {
        sampleRate: task.sampleRate,
        rate: task.rate,
        volume: task.volume,
        msPerChar: config.msPerChar,
      });
      const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
      task.queue.push({ text, pcm: Buffer.from(bytes) });
      task.record.framesPlanned += frameCuts(bytes.length, task.sampleRate).length;
    };

    /** Byte offsets where frames end: every `frameMs`, odd boundaries one byte late when asked. */
    const frameCuts = (length: number, sampleRate: number): number[] => {
      const frameBytes = Math.max(2, Math.round((config.frameMs * sampleRate) / 1000) * 2);
      const cuts: number[] = [];
      for (let k = 1; k * frameBytes < length; k++) {
        cuts.push(k * frameBytes + (config.oddFrames && k % 2 === 1 ? 1 : 0));
      }
      cuts.push(length);
      return cuts;
    };

    const event = (task: RunningTask, name: string, payload: Record<string, unknown>) =>
      send({ header: { task_id: task.record.taskId, event: name, attributes: {} }, payload });

    /** Sends rendered sentences frame by frame; ends the task once finish-task drained everything. */
    const pump = async (task: RunningTask) => {
      if (task.pumping) return;
      task.pumping = true;
      try {
        while (!task.stopped) {
          const sentence = task.queue.shift();
          if (!sentence) break;
          const index = task.sentenceIndex++;
          event(task, 'result-generated', {
            output: { sentence: { index, words: [] }, type: 'sentence-begin', original_text: sentence.text },
          });
          let at = 0;
          for (const cut of frameCuts(sentence.pcm.length, task.sampleRate)) {
            if (!task.firstFrameSent) {
              if (config.firstAudioDelayMs > 0) await sleep(config.firstAudioDelayMs);
            } else if (config.interFrameDelayMs > 0) {
              await sleep(config.interFrameDelayMs);
            }
            if (task.stopped) return;
            const fault = task.fault;
            if (fault && 'afterFrames' in fault && task.record.framesSent >= fault.afterFrames) {
              task.fault = null;
              if (fault.kind === 'drop') {
                endTask(task, 'failed');
                task.record.errorCode = 'dropped';
                drop();
              } else {
                failTask(
                  task.record.taskId,
                  fault.errorCode ?? 'InternalError',
                  fault.errorMessage ?? '[tts:]Engine return error code: 500',
                  task,
                );
              }
              return;
            }
            event(task, 'result-generated', {
              output: { sentence: { index, words: [] }, type: 'sentence-synthesis' },
            });
            if (ws.readyState !== WebSocket.OPEN) return;
            ws.send(sentence.pcm.subarray(at, cut));
            task.record.at.firstFrame ??= wallClock();
            task.firstFrameSent = true;
            task.record.framesSent++;
            task.record.samplesSent += (cut - at) / 2;
            at = cut;
          }
          task.characters += dashScopeCharacters(sentence.text);
          event(task, 'result-generated', {
            output: { sentence: { index, words: [] }, type: 'sentence-end', original_text: sentence.text },
            usage: { characters: task.characters },
          });
        }
        if (!task.stopped && task.record.finishReceived && task.queue.length === 0) {
          endTask(task, 'finished');
          send({
            header: {
              task_id: task.record.taskId,
              event: 'task-finished',
              attributes: { request_uuid: randomUUID() },
            },
            payload: { output: { sentence: { words: [] } }, usage: { characters: task.characters } },
          });
          armConnectionIdle();
        }
      } finally {
        task.pumping = false;
      }
    };

    const runTask = (header: Record<string, unknown>, payload: Record<string, unknown>) => {
      const taskId = header.task_id as string;
      if (!authorized) {
        refused(header, payload, 'InvalidApiKey');
        return failTask(taskId, 'InvalidApiKey', 'Invalid API-key provided.');
      }
      const fault = nextFault;
      if (fault && 'at' in fault) {
        nextFault = null;
        refused(header, payload, 'dropped');
        return drop();
      }
      const parameters = (payload.parameters ?? {}) as Record<string, unknown>;
      const invalid = checkRunTask(header, payload, parameters, taskIds);
      if (invalid) {
        refused(header, payload, invalid.code);
        return failTask(taskId, invalid.code, invalid.message);
      }
      if (active.size >= config.maxConcurrentTasks) {
        refused(header, payload, 'Throttling.RateQuota');
        return failTask(
          taskId,
          'Throttling.RateQuota',
          'Requests rate limit exceeded, please try again later.',
        );
      }
      if (current) endTask(current, 'superseded');
      clearTimeout(idleTimer);
      taskIds.add(taskId);
      nextFault = null;
      const record: DashScopeTask = {
        connection: connection.index,
        taskId,
        model: payload.model as string,
        parameters,
        texts: [],
        state: 'started',
        framesPlanned: 0,
        framesSent: 0,
        samplesSent: 0,
        finishReceived: false,
        at: { run: wallClock() },
      };
      received.push(record);
      const task: RunningTask = {
        record,
        pending: '',
        queue: [],
        sentenceIndex: 0,
        characters: 0,
        fault,
        sampleRate: (parameters.sample_rate as number | undefined) ?? 22050,
        rate: (parameters.rate as number | undefined) ?? 1,
        volume: (parameters.volume as number | undefined) ?? 50,
        stopped: false,
        pumping: false,
        firstFrameSent: false,
      };
      current = task;
      active.add(task);
      event(task, 'task-started', {});
      armTaskIdle(task);
    };

    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) return closeByServer(1007);
      let message: { header?: Record<string, unknown>; payload?: Record<string, unknown> };
      try {
        message = JSON.parse(data.toString());
      } catch {
        return closeByServer(1007);
      }
      const header = message?.header;
      const payload = message?.payload;
      if (!header || typeof header.action !== 'string' || typeof header.task_id !== 'string' || !payload) {
        return closeByServer(1007);
      }
      if (header.action === 'run-task') return runTask(header, payload);
      const task = current;
      if (!task || task.record.taskId !== header.task_id) {
        return failTask(header.task_id, 'InvalidParameter', `task ${header.task_id} is not running`);
      }
      if (header.streaming !== 'duplex') {
        return failTask(header.task_id, 'InvalidParameter', 'streaming must be duplex', task);
      }
      const input = payload.input as { text?: unknown } | undefined;
      if (header.action === 'continue-task') {
        if (task.record.finishReceived) {
          return failTask(header.task_id, 'InvalidParameter', 'task already finishing', task);
        }
        if (typeof input?.text !== 'string') {
          return failTask(header.task_id, 'InvalidParameter', 'input.text is required', task);
        }
        if (dashScopeCharacters(input.text) > 20_000) {
          return failTask(header.task_id, 'InvalidParameter', 'text exceeds 20000 characters', task);
        }
        task.record.texts.push(input.text);
        task.record.at.text ??= wallClock();
        armTaskIdle(task);
        task.pending += input.text;
        for (let match = SENTENCE_END.exec(task.pending); match; match = SENTENCE_END.exec(task.pending)) {
          render(task, task.pending.slice(0, match.index + 1));
          task.pending = task.pending.slice(match.index + 1);
        }
        void pump(task);
        return;
      }
      if (header.action === 'finish-task') {
        if (!input || typeof input !== 'object') {
          return failTask(header.task_id, 'InvalidParameter', 'task can not be null', task);
        }
        clearTimeout(task.idleTimer);
        task.record.finishReceived = true;
        render(task, task.pending);
        task.pending = '';
        void pump(task);
        return;
      }
      return failTask(header.task_id, 'InvalidParameter', `unknown action ${header.action}`, task);
    });

    ws.on('close', () => {
      open--;
      clearTimeout(idleTimer);
      connection.closedBy ??= 'client';
      if (current) endTask(current, 'abandoned');
      markClosed();
    });
    ws.on('error', () => {});
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;

  return {
    url: `ws://127.0.0.1:${port}${PATH}`,
    received,
    get connections() {
      return sockets.length;
    },
    get openConnections() {
      return open;
    },
    get refusedUpgrades() {
      return refusedUpgrades;
    },
    sockets,
    set(next) {
      Object.assign(config, next);
    },
    failNext(fault) {
      nextFault = fault;
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      for (const socket of rawSockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The run-task checks, with the codes the service answers: InvalidParameter, ModelNotFound. */
function checkRunTask(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  parameters: Record<string, unknown>,
  seen: Set<string>,
): { code: string; message: string } | null {
  const bad = (message: string) => ({ code: 'InvalidParameter', message });
  const taskId = header.task_id as string;
  if (!/^[0-9a-f]{32}$/i.test(taskId.replace(/-/g, ''))) return bad('task_id must be a uuid');
  if (seen.has(taskId)) return bad(`task_id ${taskId} was already used on this connection`);
  if (header.streaming !== 'duplex') return bad('streaming must be duplex');
  if (payload.task_group !== 'audio' || payload.task !== 'tts' || payload.function !== 'SpeechSynthesizer') {
    return bad('task_group/task/function must be audio/tts/SpeechSynthesizer');
  }
  if (!payload.input || typeof payload.input !== 'object') return bad('task can not be null');
  const model = payload.model;
  if (typeof model !== 'string' || !model) return bad('Model not specified');
  if (!/^cosyvoice-v[0-9]/.test(model))
    return { code: 'ModelNotFound', message: `Model not exist: ${model}` };
  if (parameters.text_type !== 'PlainText') return bad('text_type must be PlainText');
  if (typeof parameters.voice !== 'string' || !parameters.voice) return bad('voice is required');
  const format = parameters.format ?? 'mp3';
  if (typeof format !== 'string' || !FORMATS.has(format))
    return bad(`format ${String(format)} is not supported`);
  // Only PCM is rendered here; asking for anything else is a client mistake in this project.
  if (format !== 'pcm') return bad(`format ${format} is not rendered by the fake`);
  const sampleRate = parameters.sample_rate ?? 22050;
  if (!DASHSCOPE_SAMPLE_RATES.includes(sampleRate as (typeof DASHSCOPE_SAMPLE_RATES)[number])) {
    return bad(`sample_rate ${String(sampleRate)} is not supported`);
  }
  const volume = parameters.volume ?? 50;
  if (typeof volume !== 'number' || !Number.isInteger(volume) || volume < 0 || volume > 100) {
    return bad('volume must be an integer in [0, 100]');
  }
  for (const name of ['rate', 'pitch'] as const) {
    const value = parameters[name] ?? 1;
    if (typeof value !== 'number' || value < 0.5 || value > 2) return bad(`${name} must be in [0.5, 2.0]`);
  }
  return null;
}
