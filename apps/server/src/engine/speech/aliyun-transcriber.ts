import { randomBytes } from 'node:crypto';
import { WebSocket } from 'ws';
import { ProviderError, type ProviderErrorKind, providerTimeout } from '../brain/openai-client';
import { type Clock, systemClock } from '../clock';
import {
  ALIYUN_TOKEN_URL,
  type AliyunCredentials,
  type AliyunTokenCache,
  sharedAliyunTokens,
} from './aliyun-token';
import { RECOGNITION_SERVICE, RECOGNITION_TIMEOUT_MS } from './openai-transcriber';
import type { RecognitionOptions, RecognitionSession, SpeechRecognizer, Transcript } from './types';
import { transcribeBySession } from './utterance';

/**
 * Aliyun 智能语音交互 real-time speech transcription (实时语音识别, namespace SpeechTranscriber)
 * over the NLS WebSocket gateway.
 *
 * Followed: help.aliyun.com "实时语音识别 WebSocket协议说明" (document 324262) and "接口说明"
 * (request parameters, events, 服务状态码), with the official SDKs as the reference for what goes
 * on the wire: aliyun/alibabacloud-nls-python-sdk 1.0.0 (nls/speech_transcriber.py, nls/core.py:
 * the token travels in the `X-NLS-Token` handshake header, message_id/task_id are uuid4 hex) and
 * aliyun/alibabacloud-nls-java-sdk 2.1.1 (SpeechTranscriber.java: "8k PCM: 3200 bytes per 200 ms",
 * i.e. real time). The flow: connect with a token (aliyun-token.ts), StartTranscription →
 * TranscriptionStarted, binary 16-bit PCM frames, SentenceBegin / TranscriptionResultChanged
 * (partials, when enable_intermediate_result) / SentenceEnd per sentence, StopTranscription →
 * TranscriptionCompleted, then the client closes; TaskFailed (header.status, status_text) at any
 * point ends the task.
 */

export const ALIYUN_GATEWAY_URL = 'wss://nls-gateway-cn-shanghai.aliyuncs.com/ws/v1';

export interface AliyunRecognizerOptions {
  /** The 智能语音交互 project's Appkey (the project's model decides language and 8 kHz). */
  appKey: string;
  accessKeyId: string;
  /** Secret: signs CreateToken, never sent anywhere itself. */
  accessKeySecret: string;
  /** Default the Shanghai gateway. */
  gatewayUrl?: string;
  /** CreateToken endpoint; default the Shanghai nls-meta. */
  tokenUrl?: string;
  /** A 泛热词 vocabulary (console or CreateAsrVocab): Aliyun's way of taking hotwords. */
  vocabularyId?: string;
  /** A 自学习模型 id. */
  customizationId?: string;
  /**
   * Maps the assistant's hotwords (`RecognitionOptions.prompt`) to a vocabulary id; the gateway
   * takes hotwords only as a vocabulary created beforehand, never inline. Wins over `vocabularyId`.
   */
  vocabularyFor?: (hotwords: string) => string | undefined;
  /** Silence that ends a sentence on the server, 200–6000 ms (Aliyun's default is 800). */
  maxSentenceSilenceMs?: number;
  /** Waits for the gateway (connect and start, stop and completion); default 8 s. */
  timeoutMs?: number;
  /**
   * Audio may run `burstMs` ahead of real time, then flows at `speedup` × real time. Aliyun wants
   * audio "at a real-time or near-real-time rate": the default is real time after a 300 ms burst,
   * which lets the audio buffered while connecting go out at once.
   */
  pacing?: { burstMs?: number; speedup?: number };
  clock?: Clock;
  /** Default: one cache for the whole process. */
  tokens?: AliyunTokenCache;
}

const { name: SERVICE, profile: PROFILE } = RECOGNITION_SERVICE;
const SAMPLE_RATE = 8000;
const SAMPLES_PER_MS = SAMPLE_RATE / 1000;
/** The documented recommendation is 100 ms of audio per binary frame (1600 bytes at 8 kHz). */
const MAX_CHUNK_SAMPLES = 100 * SAMPLES_PER_MS;
/** Below this much budget the pump waits rather than send slivers. */
const MIN_CHUNK_SAMPLES = 20 * SAMPLES_PER_MS;

const hex32 = () => randomBytes(16).toString('hex');

const fail = (kind: ProviderErrorKind, message: string, status?: number) =>
  new ProviderError(kind, message, status, RECOGNITION_SERVICE.id);

/** Status texts can quote the token ("The token 'xxx' has expired"); nothing secret leaves. */
function redact(text: string, secrets: string[]): string {
  let out = text.replace(/token\s*'[^']*'/gi, "token '***'");
  for (const secret of secrets) if (secret) out = out.split(secret).join('***');
  return out.length > 160 ? `${out.slice(0, 160)}…` : out;
}

/** A TaskFailed as the console shows it, by Aliyun's documented status codes. */
export function taskFailure(status: number, statusText: string, secrets: string[] = []): ProviderError {
  const text = redact(statusText, secrets);
  const detail = `（${status}${text ? `：${text}` : ''}）`;
  switch (status) {
    case 40000001:
      return fail(
        'auth',
        `${SERVICE}（阿里云）拒绝了访问令牌${detail}，请检查${PROFILE}中的 AccessKey 与 Appkey`,
        status,
      );
    case 40020105:
    case 41000002:
      return fail(
        'auth',
        `${SERVICE}（阿里云）找不到该 Appkey${detail}，请检查${PROFILE}中的 Appkey`,
        status,
      );
    case 40020106:
    case 41000003:
      return fail(
        'auth',
        `${SERVICE}（阿里云）的 Appkey 与 AccessKey 不属于同一账号${detail}，请检查${PROFILE}`,
        status,
      );
    case 40000010:
      return fail(
        'auth',
        `${SERVICE}（阿里云）试用已到期或账户欠费${detail}，请在阿里云控制台开通商用版后再试`,
        status,
      );
    case 40000005:
      return fail(
        'rate_limit',
        `${SERVICE}（阿里云）并发请求过多${detail}，请稍后再试或提高并发额度`,
        status,
      );
    case 40000004:
      return fail('timeout', `${SERVICE}（阿里云）长时间没有收到音频，连接被服务端关闭${detail}`, status);
    case 41040201:
      return fail('timeout', `${SERVICE}（阿里云）没有持续收到音频${detail}`, status);
  }
  if (status >= 50000000) {
    return fail('upstream', `${SERVICE}（阿里云）暂时不可用${detail}，请稍后再试`, status);
  }
  return fail('bad_request', `${SERVICE}（阿里云）拒绝了识别请求${detail}，请检查${PROFILE}`, status);
}

const tokenRefusedError = (status?: number) =>
  fail(
    'auth',
    `${SERVICE}（阿里云）拒绝了访问令牌（令牌无效或已过期），请检查${PROFILE}中的 AccessKey 与 Appkey 是否属于同一账号`,
    status,
  );

/** The gateway refused the token: a cached one is fetched anew once before this becomes an error. */
class TokenRefused extends Error {
  constructor(readonly error: ProviderError) {
    super(error.message);
  }
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {});
  return { promise, resolve, reject };
}

interface SessionConfig {
  credentials: AliyunCredentials;
  options: AliyunRecognizerOptions;
  gatewayUrl: string;
  tokens: AliyunTokenCache;
  clock: Clock;
  timeoutMs: number;
  burstMs: number;
  speedup: number;
}

interface NlsEvent {
  header?: { name?: string; status?: number; status_text?: string };
  payload?: { index?: number; result?: string };
}

/** One StartTranscription … TranscriptionCompleted task on its own connection. */
class AliyunTranscription implements RecognitionSession {
  private readonly queue: Int16Array[] = [];
  private queued = 0;
  private written = 0;
  private sentSamples = 0;
  private startedAt = 0;
  private streaming = false;
  /** The gateway may hang up right after TranscriptionCompleted: that close is not a failure. */
  private completedReceived = false;
  private ws: WebSocket | undefined;
  private token = '';
  private readonly taskId = hex32();
  private ending = false;
  private done = false;
  private failure: { error: unknown } | undefined;
  private result: Transcript | undefined;
  private finished: Promise<Transcript> | undefined;
  private finishing: { resolve: (t: Transcript) => void; reject: (err: unknown) => void } | undefined;
  private started = deferred();
  private completed = deferred();
  /** Rejected by `fail`: every wait of the run loop races it. */
  private readonly failed = deferred();
  private wake: (() => void) | undefined;
  private readonly teardown = new AbortController();
  private readonly sentences = new Map<number, string>();
  private partial = { index: 0, text: '' };
  private readonly listeners: ((text: string) => void)[] = [];

  constructor(
    private readonly config: SessionConfig,
    private readonly recognition: RecognitionOptions,
  ) {
    const { signal } = recognition;
    if (signal?.aborted) {
      this.fail(signal.reason);
      return;
    }
    signal?.addEventListener('abort', this.onCallerAbort, { once: true });
    void this.run();
  }

  write(pcm: Int16Array): void {
    if (this.done || this.ending || pcm.length === 0) return;
    this.queue.push(pcm);
    this.queued += pcm.length;
    this.written += pcm.length;
    this.kick();
  }

  onPartial(listener: (text: string) => void): void {
    this.listeners.push(listener);
  }

  finish(): Promise<Transcript> {
    if (this.failure) return Promise.reject(this.failure.error);
    if (this.result) return Promise.resolve(this.result);
    if (!this.finished) {
      this.ending = true;
      this.finished = new Promise<Transcript>((resolve, reject) => {
        this.finishing = { resolve, reject };
      });
      this.kick();
    }
    return this.finished;
  }

  abort(): void {
    this.fail(new DOMException('语音识别已取消', 'AbortError'));
  }

  private readonly onCallerAbort = () => this.fail(this.recognition.signal?.reason);

  private kick() {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** Resolves with `work`, or rejects as soon as the session fails. */
  private until<T>(work: Promise<T>): Promise<T> {
    work.catch(() => {});
    return Promise.race([work, this.failed.promise.then(() => work)]);
  }

  /** Fails the session with a timeout unless the returned function is called within `ms`. */
  private deadline(ms: number): () => void {
    const stop = new AbortController();
    this.config.clock.sleep(ms, stop.signal).then(
      () => this.fail(providerTimeout(ms, RECOGNITION_SERVICE)),
      () => {},
    );
    return () => stop.abort();
  }

  private async run() {
    try {
      const stopDeadline = this.deadline(this.config.timeoutMs);
      try {
        await this.connect();
      } finally {
        stopDeadline();
      }
      await this.pump();
      if (this.done) return;
      await this.stop();
    } catch (err) {
      this.fail(err);
    }
  }

  private async connect() {
    const { tokens, credentials, clock } = this.config;
    let retried = false;
    for (;;) {
      const { token, cached } = await this.until(tokens.get(credentials, { clock }));
      this.token = token;
      this.started = deferred();
      this.open(token);
      try {
        await this.until(this.started.promise);
        this.streaming = true;
        this.startedAt = clock.now();
        return;
      } catch (err) {
        if (!(err instanceof TokenRefused)) throw err;
        tokens.invalidate(credentials, token);
        this.close();
        if (!cached || retried) throw err.error;
        retried = true;
      }
    }
  }

  private open(token: string) {
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.config.gatewayUrl, {
        headers: { 'X-NLS-Token': token },
        perMessageDeflate: false,
      });
    } catch {
      throw fail(
        'bad_request',
        `${SERVICE}（阿里云）的网关地址格式不正确，请检查${PROFILE}中的网关地址（如 wss://…/ws/v1）`,
      );
    }
    this.ws = ws;
    let opened = false;
    const mine = () => this.ws === ws;
    ws.on('unexpected-response', (_req, res) => {
      // Drained, not destroyed: close() terminates the handshake once the session decides.
      res.resume();
      if (!mine()) return;
      const status = res.statusCode ?? 0;
      if (status === 401 || status === 403) this.started.reject(new TokenRefused(tokenRefusedError(status)));
      else if (status === 404) {
        this.fail(
          fail(
            'not_found',
            `${SERVICE}（阿里云）的网关地址不正确（HTTP 404），请检查${PROFILE}中的网关地址`,
            404,
          ),
        );
      } else {
        this.fail(
          fail('upstream', `${SERVICE}（阿里云）的网关拒绝了连接（HTTP ${status}），请稍后再试`, status),
        );
      }
    });
    ws.on('error', () => {
      // 'close' follows and says what it meant for the session.
    });
    ws.on('open', () => {
      if (!mine()) return;
      opened = true;
      ws.send(JSON.stringify(this.startDirective()));
    });
    ws.on('message', (data, isBinary) => {
      if (!mine() || isBinary) return;
      this.handle(
        (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString('utf8'),
      );
    });
    ws.on('close', () => {
      if (!mine() || this.done || this.completedReceived) return;
      this.fail(
        opened
          ? fail('network', `与${SERVICE}（阿里云）的连接意外断开，请稍后再试`)
          : fail('network', `无法连接${SERVICE}（阿里云），请检查${PROFILE}中的网关地址与网络`),
      );
    });
  }

  private header(name: string) {
    return {
      message_id: hex32(),
      task_id: this.taskId,
      namespace: 'SpeechTranscriber',
      name,
      appkey: this.config.options.appKey,
    };
  }

  private startDirective() {
    const { options } = this.config;
    const hotwords = this.recognition.prompt?.trim();
    const vocabularyId = (hotwords && options.vocabularyFor?.(hotwords)) || options.vocabularyId;
    return {
      header: this.header('StartTranscription'),
      payload: {
        format: 'pcm',
        sample_rate: SAMPLE_RATE,
        // Partials let the leg end a turn on a stable text before the server's sentence end.
        enable_intermediate_result: true,
        enable_punctuation_prediction: true,
        // Digits, not 一三八…: phone numbers and amounts reach the brain as they are meant.
        enable_inverse_text_normalization: true,
        ...(options.maxSentenceSilenceMs !== undefined
          ? { max_sentence_silence: options.maxSentenceSilenceMs }
          : {}),
        ...(vocabularyId ? { vocabulary_id: vocabularyId } : {}),
        ...(options.customizationId ? { customization_id: options.customizationId } : {}),
      },
    };
  }

  private handle(raw: string) {
    let event: NlsEvent;
    try {
      event = JSON.parse(raw) as NlsEvent;
    } catch {
      return;
    }
    const name = event.header?.name;
    const payload = event.payload ?? {};
    switch (name) {
      case 'TranscriptionStarted':
        this.started.resolve();
        return;
      case 'SentenceBegin':
        return;
      case 'TranscriptionResultChanged':
        this.partial = { index: payload.index ?? 0, text: payload.result ?? '' };
        this.emit();
        return;
      case 'SentenceEnd':
        this.sentences.set(payload.index ?? this.sentences.size + 1, payload.result ?? '');
        this.partial = { index: 0, text: '' };
        this.emit();
        return;
      case 'TranscriptionCompleted':
        this.completedReceived = true;
        this.completed.resolve();
        return;
      case 'TaskFailed': {
        const status = event.header?.status ?? 0;
        const error = taskFailure(status, event.header?.status_text ?? '', this.secrets());
        if (status === 40000001 && !this.streaming) this.started.reject(new TokenRefused(error));
        else this.fail(error);
        return;
      }
    }
  }

  private secrets() {
    return [this.token, this.config.credentials.accessKeySecret];
  }

  private committedText(): string {
    return [...this.sentences.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, text]) => text)
      .join('');
  }

  private emit() {
    const text = (this.committedText() + this.partial.text).trim();
    for (const listener of this.listeners) listener(text);
  }

  /** Sends the queued audio no faster than the pacing allows, until `finish` and an empty queue. */
  private async pump() {
    const { clock, burstMs, speedup } = this.config;
    for (;;) {
      if (this.done) return;
      if (this.queued === 0) {
        if (this.ending) return;
        await this.until(new Promise<void>((resolve) => (this.wake = resolve)));
        continue;
      }
      const budget = Math.floor(
        (burstMs + (clock.now() - this.startedAt) * speedup) * SAMPLES_PER_MS - this.sentSamples,
      );
      const want = Math.min(this.queued, MAX_CHUNK_SAMPLES);
      if (budget < Math.min(want, MIN_CHUNK_SAMPLES)) {
        const waitMs = Math.ceil((Math.min(want, MIN_CHUNK_SAMPLES) - budget) / SAMPLES_PER_MS / speedup);
        await this.until(clock.sleep(Math.max(1, waitMs), this.teardown.signal));
        continue;
      }
      this.send(Math.min(want, budget));
    }
  }

  /** Takes `samples` off the queue as one binary frame of little-endian 16-bit PCM. */
  private send(samples: number) {
    const frame = Buffer.alloc(samples * 2);
    let at = 0;
    while (at < samples) {
      const head = this.queue[0] as Int16Array;
      const take = Math.min(head.length, samples - at);
      for (let i = 0; i < take; i++) frame.writeInt16LE(head[i] as number, (at + i) * 2);
      at += take;
      if (take === head.length) this.queue.shift();
      else this.queue[0] = head.subarray(take);
    }
    this.queued -= samples;
    this.sentSamples += samples;
    this.ws?.send(frame);
  }

  private async stop() {
    const stopDeadline = this.deadline(this.config.timeoutMs);
    try {
      this.ws?.send(JSON.stringify({ header: this.header('StopTranscription') }));
      await this.until(this.completed.promise);
    } finally {
      stopDeadline();
    }
    if (this.done) return;
    this.result = {
      text: this.committedText().trim(),
      durationMs: Math.round(this.written / SAMPLES_PER_MS),
    };
    this.done = true;
    this.cleanup();
    this.finishing?.resolve(this.result);
  }

  private fail(error: unknown) {
    if (this.done) return;
    this.done = true;
    this.failure = { error };
    this.queue.length = 0;
    this.queued = 0;
    this.failed.reject(error);
    this.cleanup();
    this.finishing?.reject(error);
  }

  private close() {
    const ws = this.ws;
    this.ws = undefined;
    if (!ws) return;
    if (ws.readyState === WebSocket.OPEN) ws.close(1000);
    else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
  }

  private cleanup() {
    this.close();
    this.teardown.abort();
    this.kick();
    this.recognition.signal?.removeEventListener('abort', this.onCallerAbort);
  }
}

/**
 * A recogniser on Aliyun NLS real-time transcription. `openSession` streams the caller's audio
 * while they speak; `transcribe` replays a recorded utterance through the same session, paced
 * like live audio (so it takes about as long as the utterance).
 */
export function createAliyunRecognizer(options: AliyunRecognizerOptions): SpeechRecognizer {
  const config: SessionConfig = {
    credentials: {
      accessKeyId: options.accessKeyId,
      accessKeySecret: options.accessKeySecret,
      tokenUrl: options.tokenUrl ?? ALIYUN_TOKEN_URL,
    },
    options,
    gatewayUrl: options.gatewayUrl ?? ALIYUN_GATEWAY_URL,
    tokens: options.tokens ?? sharedAliyunTokens,
    clock: options.clock ?? systemClock,
    timeoutMs: options.timeoutMs ?? RECOGNITION_TIMEOUT_MS,
    burstMs: Math.max(0, options.pacing?.burstMs ?? 300),
    speedup: Math.max(0.1, options.pacing?.speedup ?? 1),
  };
  const open = (recognition: RecognitionOptions) => new AliyunTranscription(config, recognition);

  return {
    transcribe: (utterance, recognition) => transcribeBySession(open, utterance, recognition),
    openSession: open,
  };
}
