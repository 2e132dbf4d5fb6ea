import { randomUUID } from 'node:crypto';
import { endianness } from 'node:os';
import WebSocket, { type RawData } from 'ws';
import { ProviderError, type ProviderErrorKind } from '../brain/openai-client';
import { type Clock, systemClock } from '../clock';
import {
  type PresetVoice,
  type StreamingSynthesizer,
  SYNTHESIS_SERVICE,
  type SynthesisOptions,
  type SynthesisVoice,
} from './synthesis';

/**
 * CosyVoice speech synthesis over DashScope's WebSocket API (阿里云百炼).
 *
 * Followed: help.aliyun.com/zh/model-studio/cosyvoice-websocket-api ("语音合成CosyVoice WebSocket
 * API", 2026-02 revision: URL, Headers, run-task / continue-task / finish-task, task-started,
 * result-generated, task-finished, task-failed, 任务中断方式, 关于建连开销和连接复用), the server-event
 * reference ("CosyVoice服务端事件"), the Model Studio error-code page (InvalidApiKey, AccessDenied,
 * Arrearage, ModelNotFound, Throttling.*, InvalidParameter, DataInspectionFailed, InternalError),
 * and the official Python SDK dashscope/dashscope-sdk-python 1.26.2 (dashscope/audio/tts_v2/
 * speech_synthesizer.py, dashscope/protocol/websocket.py) for what goes on the wire.
 *
 * - Handshake headers `Authorization: bearer <key>` and `X-DashScope-DataInspection: enable`; the key
 *   is checked there, a bad one answers HTTP 401/403 (older gateways: task-failed InvalidApiKey).
 * - run-task: header {action, task_id (uuid4 hex, as the SDK), streaming 'duplex'}, payload
 *   {task_group 'audio', task 'tts', function 'SpeechSynthesizer', model, parameters {text_type
 *   'PlainText', voice, format 'pcm', sample_rate, volume 0-100, rate 0.5-2, pitch 1}, input {}}.
 *   After task-started: continue-task(s) with payload.input.text, then finish-task at once (the
 *   service fails a task whose text pauses for 23 s). Binary frames are 16-bit little-endian PCM
 *   at the requested rate; frames need not end on a sample boundary, so an odd byte is carried.
 * - task-finished ends a task and leaves the connection reusable for the next run-task (a new
 *   task_id); task-failed closes it. The service drops connections idle for 60 s after a task, so
 *   the pool keeps idle sockets for `idleMs` (30 s) and retries once on a fresh socket when a
 *   reused one dies before its task started.
 * - Interrupting: closing the connection stops synthesis at once and discards what is unsent, so
 *   an abort closes the socket rather than reusing it: none of its leftover frames can reach the
 *   next task.
 */

export const DASHSCOPE_WS_URL = 'wss://dashscope.aliyuncs.com/api-ws/v1/inference';
export const COSYVOICE_DEFAULT_MODEL = 'cosyvoice-v2';
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_IDLE_MS = 30_000;
const DEFAULT_MAX_IDLE = 4;
/** The API takes 20 000 characters per continue-task; short pieces keep every message far below. */
const MAX_PIECE_CHARACTERS = 2000;

/**
 * cosyvoice-v2's system voices suited to customer service, all offering 8 kHz (help.aliyun.com
 * 智能语音交互 "CosyVoice-V2音色" table: name, voice value, type). Each model has its own set;
 * another model needs its own list, and cloned voices come from enrolment instead.
 */
export const COSYVOICE_V2_VOICES: readonly PresetVoice[] = [
  { voiceId: 'longxiaochun_v2', name: '龙小淳（温柔姐姐）', gender: 'female', language: 'zh-CN' },
  { voiceId: 'longxiaoxia_v2', name: '龙小夏（温柔女声）', gender: 'female', language: 'zh-CN' },
  { voiceId: 'longwan_v2', name: '龙婉（普通话女声）', gender: 'female', language: 'zh-CN' },
  { voiceId: 'loongbella_v2', name: 'Bella2.0（新闻女声）', gender: 'female', language: 'zh-CN' },
  { voiceId: 'longhua_v2', name: '龙华（活泼女童）', gender: 'female', language: 'zh-CN' },
  { voiceId: 'longcheng_v2', name: '龙橙（阳光男声）', gender: 'male', language: 'zh-CN' },
  { voiceId: 'longshu_v2', name: '龙书（新闻男声）', gender: 'male', language: 'zh-CN' },
];

export interface CosyVoiceSynthesizerOptions {
  /** The 百炼 API Key; secret, sent only in the handshake header. */
  apiKey: string;
  /** Default the Beijing endpoint; `wss://dashscope-intl.aliyuncs.com/api-ws/v1/inference` abroad. */
  url?: string;
  /** Default cosyvoice-v2. A cloned voice must be spoken by the model it was enrolled for. */
  model?: string;
  /** Timeouts and idle connections run on this clock. */
  clock?: Clock;
  /** No audio this long after the request (or between frames) fails the stream; default 10 s. */
  timeoutMs?: number;
  /** An unused pooled connection is closed after this long; default 30 s (the service allows 60). */
  idleMs?: number;
  /** Idle connections kept for reuse; default 4. */
  maxIdle?: number;
}

const { name: SERVICE, profile: PROFILE } = SYNTHESIS_SERVICE;
const VENDOR = `${SERVICE}（阿里云百炼 CosyVoice）`;
const BIG_ENDIAN = endianness() === 'BE';

const fail = (kind: ProviderErrorKind, message: string, status?: number) =>
  new ProviderError(kind, message, status, SYNTHESIS_SERVICE.id);

/** Vendor texts go to the console only with the key (and anything key-shaped) masked. */
function redact(text: string, apiKey: string): string {
  let out = apiKey ? text.split(apiKey).join('***') : text;
  out = out.replace(/\b(sk|ak|key)[-_][A-Za-z0-9_*-]{6,}/gi, '***');
  out = out.replace(/bearer\s+\S+/gi, 'bearer ***');
  return out.length > 160 ? `${out.slice(0, 160)}…` : out;
}

const waitText = (ms: number) => (ms >= 1000 ? `${Math.round(ms / 1000)} 秒` : `${ms} 毫秒`);

function timeoutError(timeoutMs: number, gotAudio: boolean): ProviderError {
  return fail(
    'timeout',
    gotAudio
      ? `${VENDOR}的音频中断超过 ${waitText(timeoutMs)}，请稍后再试`
      : `${VENDOR}在 ${waitText(timeoutMs)}内没有返回音频（响应超时），请稍后再试`,
  );
}

/** A refused handshake, by HTTP status and, when the body has one, DashScope's error code. */
function upgradeRefused(status: number, code: string | undefined, model: string): ProviderError {
  if (code) {
    const known = taskFailure(code, '', '', model);
    if (known.kind !== 'upstream')
      return new ProviderError(known.kind, known.message, status, SYNTHESIS_SERVICE.id);
  }
  if (status === 401 || status === 403) {
    return fail('auth', `${VENDOR}拒绝了 API Key（HTTP ${status}），请检查${PROFILE}中的 API Key`, status);
  }
  if (status === 404) {
    return fail('not_found', `${VENDOR}的服务地址不正确（HTTP 404），请检查${PROFILE}中的服务地址`, status);
  }
  if (status === 429) return fail('rate_limit', `${VENDOR}请求过于频繁（HTTP 429），请稍后再试`, status);
  if (status >= 500) return fail('upstream', `${VENDOR}暂时不可用（HTTP ${status}），请稍后再试`, status);
  return fail(
    'bad_request',
    `${VENDOR}拒绝了连接（HTTP ${status}），请确认${PROFILE}中的服务地址指向 DashScope WebSocket 接口`,
    status,
  );
}

/** A task-failed as the console shows it, by DashScope's documented error codes. */
export function taskFailure(code: string, message: string, apiKey: string, model: string): ProviderError {
  const text = redact(message, apiKey);
  const detail = `（${code}${text ? `：${text}` : ''}）`;
  if (code === 'InvalidApiKey' || code === 'InvalidAPIKey') {
    return fail('auth', `${VENDOR}拒绝了 API Key${detail}，请检查${PROFILE}中的 API Key`, 401);
  }
  if (code === 'Arrearage') {
    return fail('auth', `${VENDOR}拒绝访问：阿里云账户欠费${detail}，请充值后再试`, 403);
  }
  if (code.startsWith('AccessDenied') || code.endsWith('.AccessDenied')) {
    return fail(
      'auth',
      `${VENDOR}拒绝访问${detail}，请确认${PROFILE}中的 API Key 已开通并有权调用模型 ${model}`,
      403,
    );
  }
  if (code === 'ModelNotFound') {
    return fail('not_found', `${VENDOR}找不到模型 ${model}${detail}，请检查${PROFILE}中的模型`, 404);
  }
  if (code.startsWith('Throttling')) {
    return fail('rate_limit', `${VENDOR}并发或调用频率超出限额${detail}，请稍后再试或申请提高并发额度`, 429);
  }
  if (code === 'DataInspectionFailed') {
    return fail('bad_request', `${VENDOR}认为待合成的文本不合规${detail}，请修改话术后再试`, 400);
  }
  if (code === 'InvalidParameter') {
    return fail(
      'bad_request',
      `${VENDOR}拒绝了合成请求${detail}，请检查${PROFILE}中的模型与音色（复刻音色须使用创建它时的模型）`,
      400,
    );
  }
  if (code === 'CLIENT_ERROR' && /timeout/i.test(message)) {
    return fail('timeout', `${VENDOR}等待待合成文本超时${detail}，请稍后再试`);
  }
  return fail('upstream', `${VENDOR}合成失败${detail}，请稍后再试`);
}

function connectFailed(): ProviderError {
  return fail('network', `无法连接${VENDOR}，请检查${PROFILE}中的服务地址与网络`);
}

function droppedMidStream(): ProviderError {
  return fail('network', `与${VENDOR}的连接在合成过程中意外断开，请稍后再试`);
}

/** The text as continue-task pieces, each at most `MAX_PIECE_CHARACTERS` by DashScope's count. */
export function textPieces(text: string): string[] {
  const pieces: string[] = [];
  let piece = '';
  let count = 0;
  for (const char of text) {
    const weight = /\p{Script=Han}/u.test(char) ? 2 : 1;
    if (count + weight > MAX_PIECE_CHARACTERS) {
      pieces.push(piece);
      piece = '';
      count = 0;
    }
    piece += char;
    count += weight;
  }
  if (piece) pieces.push(piece);
  return pieces;
}

const clamp = (value: number, min: number, max: number, fallback: number) =>
  Number.isFinite(value) ? Math.min(max, Math.max(min, value)) : fallback;

interface DashScopeEvent {
  header?: { task_id?: string; event?: string; error_code?: string; error_message?: string };
}

/** What a connection tells the task running on it. */
interface TaskListener {
  readonly taskId: string;
  event(message: DashScopeEvent): void;
  audio(data: Buffer): void;
  closed(connection: Connection): void;
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** One WebSocket to DashScope: at most one task at a time, pooled between tasks. */
class Connection {
  readonly ready: Promise<void>;
  listener: TaskListener | undefined;
  /** Tasks started on it: a reused socket may have been dropped by the service meanwhile. */
  uses = 0;
  private readonly ws: WebSocket;
  private opened = false;
  private gone = false;
  private parked: AbortController | undefined;

  constructor(url: string, apiKey: string, model: string, onGone: (connection: Connection) => void) {
    let settle!: { resolve: () => void; reject: (error: unknown) => void };
    this.ready = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    this.ready.catch(() => {});
    this.ws = new WebSocket(url, {
      headers: { Authorization: `bearer ${apiKey}`, 'X-DashScope-DataInspection': 'enable' },
      perMessageDeflate: false,
    });
    this.ws.on('unexpected-response', (_request, response) => {
      const status = response.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= 4096) chunks.push(chunk);
      });
      const decide = () => {
        let code: string | undefined;
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { code?: unknown };
          if (typeof body.code === 'string') code = body.code;
        } catch {
          // Not DashScope's JSON: the status alone decides.
        }
        settle.reject(upgradeRefused(status, code, model));
        this.close();
      };
      response.on('end', decide);
      response.on('error', decide);
    });
    this.ws.on('open', () => {
      this.opened = true;
      settle.resolve();
    });
    this.ws.on('error', () => {
      // 'close' follows and decides what it meant.
    });
    this.ws.on('message', (data, isBinary) => {
      const listener = this.listener;
      if (!listener) return;
      if (isBinary) return listener.audio(toBuffer(data));
      let message: DashScopeEvent;
      try {
        message = JSON.parse(toBuffer(data).toString('utf8')) as DashScopeEvent;
      } catch {
        return;
      }
      // Events of an earlier task never reach the current one.
      if (message?.header?.task_id !== listener.taskId) return;
      listener.event(message);
    });
    this.ws.on('close', () => {
      this.gone = true;
      this.unpark();
      settle.reject(connectFailed());
      const listener = this.listener;
      this.listener = undefined;
      listener?.closed(this);
      onGone(this);
    });
  }

  get usable(): boolean {
    return this.opened && !this.gone && this.ws.readyState === WebSocket.OPEN;
  }

  get wasOpened(): boolean {
    return this.opened;
  }

  send(body: unknown): boolean {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(body));
    return true;
  }

  /** Idles in the pool until `ms` passes on `clock`, then `expire` runs. */
  park(clock: Clock, ms: number, expire: () => void) {
    this.unpark();
    const parked = new AbortController();
    this.parked = parked;
    clock.sleep(ms, parked.signal).then(
      () => {
        if (this.parked === parked) expire();
      },
      () => {},
    );
  }

  unpark() {
    this.parked?.abort();
    this.parked = undefined;
  }

  /** Closes for good: nothing it still receives reaches any task. */
  close() {
    this.listener = undefined;
    this.unpark();
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
    else if (this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
  }
}

interface Settings {
  apiKey: string;
  url: string;
  model: string;
  clock: Clock;
  timeoutMs: number;
}

interface Pool {
  acquire(fresh: boolean): Connection;
  release(connection: Connection): void;
}

/** One run-task … task-finished, feeding a generator's queue. */
class SynthesisTask implements TaskListener {
  taskId = randomUUID().replace(/-/g, '');
  readonly queue: Int16Array[] = [];
  /** task-finished arrived: every frame of this task is in, the socket is clean. */
  finished = false;
  failure: { error: unknown } | undefined;
  private connection: Connection | undefined;
  private started = false;
  private settled = false;
  private retried = false;
  private carry: number | undefined;
  private gotAudio = false;
  private progressAt: number;
  private waiter: (() => void) | undefined;
  private readonly stopWatch = new AbortController();

  constructor(
    private readonly settings: Settings,
    private readonly pool: Pool,
    private readonly text: string,
    private readonly voice: SynthesisVoice,
    private readonly options: SynthesisOptions,
  ) {
    this.progressAt = settings.clock.now();
  }

  begin() {
    void this.watch();
    this.attach(this.pool.acquire(false));
  }

  /** Resolves at the next thing the generator should look at. */
  next(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiter = resolve;
    });
  }

  wake() {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  /** Barge-in or hang-up: the socket closes now, and its leftovers go with it. */
  abort() {
    if (this.settled) return;
    this.settled = true;
    this.drop();
    this.wake();
  }

  /** The generator is done: a finished task's socket goes back to the pool, any other is closed. */
  end() {
    this.settled = true;
    this.stopWatch.abort();
    const connection = this.connection;
    this.connection = undefined;
    if (!connection) return;
    if (this.finished && !this.failure) {
      connection.listener = undefined;
      this.pool.release(connection);
    } else {
      connection.close();
    }
  }

  event(message: DashScopeEvent) {
    if (this.settled) return;
    const header = message.header ?? {};
    switch (header.event) {
      case 'task-started':
        this.started = true;
        this.sendText();
        return;
      case 'task-finished':
        this.finished = true;
        // Half a sample cannot be played; a well-formed stream never leaves one.
        this.carry = undefined;
        this.settled = true;
        this.stopWatch.abort();
        this.wake();
        return;
      case 'task-failed':
        this.fail(
          taskFailure(
            header.error_code ?? 'UnknownError',
            header.error_message ?? '',
            this.settings.apiKey,
            this.settings.model,
          ),
        );
        return;
    }
  }

  audio(data: Buffer) {
    if (this.settled) return;
    let bytes = data;
    if (this.carry !== undefined) {
      bytes = Buffer.concat([Buffer.of(this.carry), data]);
      this.carry = undefined;
    }
    const even = bytes.length & ~1;
    if (even !== bytes.length) this.carry = bytes[even];
    if (even === 0) return;
    const samples = new Int16Array(even / 2);
    const view = Buffer.from(samples.buffer, 0, even);
    bytes.copy(view, 0, 0, even);
    if (BIG_ENDIAN) view.swap16();
    this.queue.push(samples);
    this.gotAudio = true;
    this.progressAt = this.settings.clock.now();
    this.wake();
  }

  closed(connection: Connection) {
    // A socket this task already left (the one a retry replaced) has nothing to say.
    if (this.settled || connection !== this.connection) return;
    // A pooled socket the service dropped while idle: one fresh try before anything failed.
    if (!this.started && connection.uses > 1 && !this.retried) {
      this.retried = true;
      connection.close();
      this.taskId = randomUUID().replace(/-/g, '');
      this.attach(this.pool.acquire(true));
      return;
    }
    // A socket that never opened reports through `ready` instead.
    if (!connection.wasOpened) return;
    this.fail(this.started ? droppedMidStream() : connectFailed());
  }

  private attach(connection: Connection) {
    this.connection = connection;
    connection.uses++;
    connection.listener = this;
    connection.ready.then(
      () => {
        if (this.connection !== connection || this.settled) return;
        if (!connection.send(this.runTask())) this.closed(connection);
      },
      (error: unknown) => {
        if (this.connection === connection) this.fail(error);
      },
    );
  }

  private header(action: string) {
    return { action, task_id: this.taskId, streaming: 'duplex' };
  }

  private runTask() {
    const { voice, options, settings } = this;
    return {
      header: this.header('run-task'),
      payload: {
        task_group: 'audio',
        task: 'tts',
        function: 'SpeechSynthesizer',
        model: settings.model,
        parameters: {
          text_type: 'PlainText',
          voice: voice.voiceId,
          format: 'pcm',
          sample_rate: options.sampleRate,
          volume: Math.round(clamp(voice.volume, 0, 100, 50)),
          rate: Math.round(clamp(voice.speed, 0.5, 2, 1) * 100) / 100,
          pitch: 1,
        },
        input: {},
      },
    };
  }

  /** All the text, then finish-task at once: the service fails a task whose text pauses 23 s. */
  private sendText() {
    const connection = this.connection;
    if (!connection) return;
    for (const text of textPieces(this.text)) {
      connection.send({ header: this.header('continue-task'), payload: { input: { text } } });
    }
    connection.send({ header: this.header('finish-task'), payload: { input: {} } });
  }

  private fail(error: unknown) {
    if (this.settled) return;
    this.settled = true;
    this.failure = { error };
    this.drop();
    this.wake();
  }

  private drop() {
    this.stopWatch.abort();
    const connection = this.connection;
    this.connection = undefined;
    connection?.close();
  }

  /** First audio within `timeoutMs` of the request, and no later gap between frames as long. */
  private async watch() {
    const { clock, timeoutMs } = this.settings;
    let wait = timeoutMs;
    for (;;) {
      try {
        await clock.sleep(wait, this.stopWatch.signal);
      } catch {
        return;
      }
      if (this.settled) return;
      const quiet = clock.now() - this.progressAt;
      if (quiet >= timeoutMs) return this.fail(timeoutError(timeoutMs, this.gotAudio));
      wait = timeoutMs - quiet;
    }
  }
}

/**
 * A StreamingSynthesizer on DashScope CosyVoice. Voice ids are preset names (longxiaochun_v2) or
 * cloned voices' ids from CosyVoice voice enrolment (cosyvoice-v2-prefix-…), passed alike.
 */
export function createCosyVoiceSynthesizer(options: CosyVoiceSynthesizerOptions): StreamingSynthesizer {
  const url = options.url?.trim() || DASHSCOPE_WS_URL;
  if (!/^wss?:\/\//i.test(url) || !URL.canParse(url)) {
    throw fail(
      'bad_request',
      `${VENDOR}的服务地址格式不正确，应以 wss:// 开头（如 ${DASHSCOPE_WS_URL}），请检查${PROFILE}中的服务地址`,
    );
  }
  const settings: Settings = {
    apiKey: options.apiKey,
    url,
    model: options.model?.trim() || COSYVOICE_DEFAULT_MODEL,
    clock: options.clock ?? systemClock,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  };
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const maxIdle = options.maxIdle ?? DEFAULT_MAX_IDLE;
  const idle: Connection[] = [];
  let closed = false;

  const forget = (connection: Connection) => {
    const at = idle.indexOf(connection);
    if (at >= 0) idle.splice(at, 1);
  };
  const pool: Pool = {
    acquire(fresh) {
      if (!fresh) {
        // Most recently used first: the least likely to have been dropped by the service.
        for (let connection = idle.pop(); connection; connection = idle.pop()) {
          connection.unpark();
          if (connection.usable) return connection;
          connection.close();
        }
      }
      return new Connection(settings.url, settings.apiKey, settings.model, forget);
    },
    release(connection) {
      if (closed || !connection.usable || idle.length >= maxIdle) return connection.close();
      idle.push(connection);
      connection.park(settings.clock, idleMs, () => {
        forget(connection);
        connection.close();
      });
    },
  };

  async function* synthesize(
    text: string,
    voice: SynthesisVoice,
    synthesis: SynthesisOptions,
  ): AsyncGenerator<Int16Array> {
    const { signal } = synthesis;
    if (signal?.aborted || !text.trim()) return;
    const task = new SynthesisTask(settings, pool, text, voice, synthesis);
    const onAbort = () => task.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      task.begin();
      for (;;) {
        if (signal?.aborted) return;
        const chunk = task.queue.shift();
        if (chunk) {
          yield chunk;
          continue;
        }
        if (task.failure) throw task.failure.error;
        if (task.finished) return;
        await task.next();
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      task.end();
    }
  }

  return {
    stream: (text, voice, synthesis) => synthesize(text, voice, synthesis),
    async close() {
      closed = true;
      for (const connection of idle.splice(0)) connection.close();
    },
  };
}
