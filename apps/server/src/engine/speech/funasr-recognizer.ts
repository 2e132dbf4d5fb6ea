import WebSocket from 'ws';
import { ProviderError, type ProviderErrorKind, providerTimeout } from '../brain/openai-client';
import { type Clock, systemClock } from '../clock';
import { RECOGNITION_SERVICE, RECOGNITION_TIMEOUT_MS } from './openai-transcriber';
import type {
  RecognitionOptions,
  RecognitionSession,
  SpeechRecognizer,
  TelephonyUtterance,
  Transcript,
} from './types';
import { emptyOrChecked } from './utterance';

/**
 * Speech recognition through a self-hosted FunASR runtime, over its websocket protocol.
 *
 * Followed (modelscope/FunASR @ 3c58cb5, 2026-08): runtime/docs/websocket_protocol.md and
 * websocket_protocol_zh.md; the C++ 2pass server runtime/websocket/bin/websocket-server-2pass.cpp
 * (what the funasr-runtime-sdk-online image runs) and the offline server websocket-server.cpp; the
 * official clients runtime/python/websocket/funasr_wss_client.py, runtime/html5/static/main.js
 * and wsconnecter.js, runtime/websocket/bin/funasr-wss-client-2pass.cpp.
 *
 * - No subprotocol: the browser client offers none, the C++ server selects none, and `ws` fails a
 *   handshake whose answer lacks a subprotocol it asked for.
 * - First message, JSON text: mode, chunk_size, chunk_interval, wav_name, wav_format 'pcm',
 *   audio_fs 8000, is_speaking true, itn, and hotwords as the JSON *string* of {word: weight}. The
 *   C++ server creates its decoder only from a chunk_size, so one is sent in every mode.
 * - Then binary 16-bit little-endian PCM, then {"is_speaking": false}.
 * - Results: `2pass-online` texts are increments of the sentence being spoken (every official
 *   client appends them); `2pass-offline` and `offline` texts are whole corrected sentences that
 *   replace those increments. After the end flag the 2pass server's last result carries
 *   `is_final: true` (its sentence ends mid-stream carry false); the offline file server answers
 *   once, with mode 'offline' and is_final false (websocket_protocol_zh.md), which ends it too.
 *
 * Pacing. The protocol has no rate limit: the C++ client and the browser's file mode send a
 * recorded file at once (in offline mode) and the server decodes from its buffer. A live stream
 * goes at chunk pace (funasr_wss_client.py sleeps 60 * chunk_size[1] / chunk_interval ms per
 * chunk, the browser sends 60 ms chunks as the microphone fills them). So `transcribe`, which has
 * the whole endpointed utterance, uses offline mode ("single-sentence recognition") and sends it
 * at once; `openSession` streams 60 ms chunks and never runs more than one chunk ahead of real
 * time, even when its frames arrive in a burst.
 *
 * Authentication. FunASR has none; a reverse proxy in front of it may ask for a bearer token on
 * the upgrade request, and a refusal (HTTP 401/403) is an auth failure.
 */

/** How a streaming session recognises: 2pass corrects each sentence with the offline model. */
export type FunAsrStreamingMode = '2pass' | 'online';

export interface FunAsrRecognizerOptions {
  /** The server's websocket address, ws://host:10095 or wss://host:10095. */
  url: string;
  /** Streaming sessions' mode (default '2pass'); `transcribe` always uses offline mode. */
  mode?: FunAsrStreamingMode;
  /** Hotwords the profile always adds, word → weight (weights matter only to FST hotwords). */
  hotwords?: Record<string, number>;
  /** Inverse text normalisation (digits for numbers); default true. */
  itn?: boolean;
  /** Sent as `Authorization: Bearer <token>` to a proxy in front of the server; secret. */
  token?: string;
  /**
   * wss:// only: verify the server's certificate (default true). FunASR's image ships a
   * self-signed one that its own client accepts unverified; false does the same.
   */
  verifyTls?: boolean;
  /** Streaming latency as FunASR configures it (default [5, 10, 5]: 600 ms decode steps). */
  chunkSize?: readonly [number, number, number];
  /** Chunks per decode step (default 10: 60 ms chunks). */
  chunkInterval?: number;
  /** How far ahead of real time a streaming session may send (default 600 ms). */
  leadMs?: number;
  timeoutMs?: number;
  /** Pacing and timeouts run on this clock. */
  clock?: Clock;
}

const SAMPLE_RATE = 8000;
const DEFAULT_CHUNK_SIZE = [5, 10, 5] as const;
const DEFAULT_CHUNK_INTERVAL = 10;
/**
 * How far ahead of real time a streaming session may send: the pre-roll and the VAD's start
 * window (about 360 ms) plus the connection's set-up. The server decodes as audio arrives; a
 * client far ahead (a whole recording at once) belongs in offline mode.
 */
const DEFAULT_LEAD_MS = 600;
/** The weight of a hotword from the assistant's list (the protocol doc's example weight). */
export const DEFAULT_HOTWORD_WEIGHT = 20;
const WAV_NAME = 'callpilot';
const VENDOR = `${RECOGNITION_SERVICE.name}（FunASR）`;

const fail = (kind: ProviderErrorKind, message: string, status?: number) =>
  new ProviderError(kind, message, status, RECOGNITION_SERVICE.id);

/**
 * The hotwords a connection sends: the assistant's words (a free list, split on spaces, commas and
 * 、) at the default weight, the profile's own weights taking precedence.
 */
export function funAsrHotwords(prompt: string | undefined, profile: Record<string, number> = {}): string {
  const words: Record<string, number> = {};
  for (const word of (prompt ?? '').split(/[\s,，、;；]+/)) if (word) words[word] = DEFAULT_HOTWORD_WEIGHT;
  for (const [word, weight] of Object.entries(profile)) {
    const trimmed = word.trim();
    // The server reads weights as integers; one it cannot read makes it drop every hotword.
    if (trimmed && Number.isFinite(weight)) words[trimmed] = Math.round(weight);
  }
  return Object.keys(words).length > 0 ? JSON.stringify(words) : '';
}

function redact(text: string, secret: string | undefined): string {
  const out = secret ? text.split(secret).join('***') : text;
  return out.length > 160 ? `${out.slice(0, 160)}…` : out;
}

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function upgradeRefused(status: number, hasToken: boolean): ProviderError {
  if (status === 401 || status === 403) {
    return fail(
      'auth',
      hasToken
        ? `${VENDOR}拒绝了访问令牌（HTTP ${status}），请检查${RECOGNITION_SERVICE.profile}中的访问令牌`
        : `${VENDOR}要求身份验证（HTTP ${status}），请在${RECOGNITION_SERVICE.profile}中填写访问令牌`,
      status,
    );
  }
  if (status === 404) {
    return fail(
      'not_found',
      `${VENDOR}找不到该地址（HTTP 404），请检查${RECOGNITION_SERVICE.profile}中的服务地址`,
      status,
    );
  }
  if (status === 429) return fail('rate_limit', `${VENDOR}连接过于频繁（HTTP 429），请稍后再试`, status);
  if (status >= 500) return fail('upstream', `${VENDOR}暂时不可用（HTTP ${status}），请稍后再试`, status);
  return fail(
    'bad_request',
    `${VENDOR}拒绝了连接（HTTP ${status}），请确认${RECOGNITION_SERVICE.profile}中的服务地址指向 FunASR websocket 服务`,
    status,
  );
}

function connectionFailed(err: Error & { code?: string }): ProviderError {
  if (err.code && TLS_CODES.has(err.code)) {
    return fail(
      'network',
      `${VENDOR}的 TLS 证书未通过校验；若使用 FunASR 自带的自签名证书，请在${RECOGNITION_SERVICE.profile}中关闭证书校验`,
    );
  }
  return fail(
    'network',
    `无法连接${VENDOR}，请检查${RECOGNITION_SERVICE.profile}中的服务地址是否正确、服务是否已启动`,
  );
}

interface ConnectionOptions {
  mode: FunAsrStreamingMode | 'offline';
  hotwords: string;
  /** Hold each chunk until real time has caught up with the audio already sent. */
  paced: boolean;
}

interface FunAsrResult {
  mode?: unknown;
  text?: unknown;
  is_final?: unknown;
  error?: unknown;
}

/**
 * One websocket recognition: connects at once, queues audio until the server is reachable, sends
 * it chunk by chunk, and settles `result` with the final transcript or a ProviderError.
 */
class FunAsrConnection {
  readonly result: Promise<Transcript>;
  private resolveResult: (transcript: Transcript) => void = () => {};
  private rejectResult: (reason: unknown) => void = () => {};
  private readonly ws: WebSocket;
  private readonly clock: Clock;
  private readonly chunkSamples: number;
  private readonly chunkMs: number;
  private readonly stop = new AbortController();
  private readonly listeners: ((text: string) => void)[] = [];
  private queue: Int16Array[] = [];
  private queued = 0;
  private written = 0;
  private ending = false;
  private endSent = false;
  private settled = false;
  private wake: (() => void) | null = null;
  /** Corrected sentences so far, and the increments of the sentence being spoken. */
  private sentences: string[] = [];
  private online = '';
  private lastPartial = '';

  constructor(
    private readonly options: FunAsrRecognizerOptions,
    private readonly connection: ConnectionOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
    const chunkInterval = options.chunkInterval ?? DEFAULT_CHUNK_INTERVAL;
    this.chunkMs = (60 * chunkSize[1]) / chunkInterval;
    this.chunkSamples = Math.max(1, Math.round((this.chunkMs * SAMPLE_RATE) / 1000));
    this.result = new Promise<Transcript>((resolve, reject) => {
      this.resolveResult = resolve;
      this.rejectResult = reject;
    });
    // A session that fails before anyone awaits finish() must not surface as an unhandled rejection.
    this.result.catch(() => {});

    this.ws = new WebSocket(options.url, {
      perMessageDeflate: false,
      rejectUnauthorized: options.verifyTls ?? true,
      ...(options.token ? { headers: { Authorization: `Bearer ${options.token}` } } : {}),
    });
    this.ws.on('unexpected-response', (_request, response) => {
      response.resume();
      this.fail(upgradeRefused(response.statusCode ?? 0, Boolean(options.token)));
    });
    const disconnected = (code: number) =>
      fail(
        'upstream',
        `${VENDOR}在识别完成前断开了连接（关闭码 ${code}），可能是长时间没有收到音频（空闲超时）或服务重启，请检查 FunASR 服务`,
      );
    let opened = false;
    this.ws.once('open', () => {
      opened = true;
    });
    this.ws.on('error', (err: Error & { code?: string }) =>
      this.fail(opened ? disconnected(1006) : connectionFailed(err)),
    );
    this.ws.on('message', (data, isBinary) => {
      if (!isBinary) this.receive(data.toString());
    });
    this.ws.on('close', (code) => this.fail(disconnected(code)));
    void this.pump();
  }

  onPartial(listener: (text: string) => void) {
    this.listeners.push(listener);
  }

  write(pcm: Int16Array) {
    if (this.ending || this.settled || pcm.length === 0) return;
    this.queue.push(pcm.slice());
    this.queued += pcm.length;
    this.written += pcm.length;
    this.kick();
  }

  end(): Promise<Transcript> {
    this.ending = true;
    this.kick();
    return this.result;
  }

  /** Gives up: closes the socket and rejects `result` with `reason`. */
  abort(reason: unknown) {
    this.fail(reason);
  }

  /** Rejects the result once, and closes: gracefully when open, so the server frees its decoder. */
  private fail(reason: unknown) {
    if (this.settled) return;
    this.settled = true;
    this.rejectResult(reason);
    this.shutdown();
  }

  private shutdown() {
    this.stop.abort();
    this.kick();
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
    else if (this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
  }

  private kick() {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
    });
  }

  private take(samples: number): Int16Array {
    const out = new Int16Array(samples);
    let at = 0;
    while (at < samples) {
      const head = this.queue[0] as Int16Array;
      const need = samples - at;
      if (head.length <= need) {
        out.set(head, at);
        at += head.length;
        this.queue.shift();
      } else {
        out.set(head.subarray(0, need), at);
        this.queue[0] = head.subarray(need);
        at = samples;
      }
    }
    this.queued -= samples;
    return out;
  }

  /** Sends the configuration, the audio chunk by chunk, then the end flag. */
  private async pump() {
    if (this.ws.readyState === WebSocket.CONNECTING) {
      await new Promise<void>((resolve) => {
        this.ws.once('open', () => resolve());
        this.stop.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    if (this.settled) return;
    const chunkSize = this.options.chunkSize ?? DEFAULT_CHUNK_SIZE;
    this.ws.send(
      JSON.stringify({
        mode: this.connection.mode,
        chunk_size: [...chunkSize],
        chunk_interval: this.options.chunkInterval ?? DEFAULT_CHUNK_INTERVAL,
        wav_name: WAV_NAME,
        wav_format: 'pcm',
        audio_fs: SAMPLE_RATE,
        is_speaking: true,
        itn: this.options.itn ?? true,
        ...(this.connection.hotwords ? { hotwords: this.connection.hotwords } : {}),
      }),
    );
    let startedAt: number | undefined;
    let sentMs = 0;
    while (!this.settled) {
      if (this.queued >= this.chunkSamples || (this.ending && this.queued > 0)) {
        if (this.connection.paced && startedAt !== undefined) {
          // Audio may run this far ahead of real time: the leg's pre-roll (the audio from before
          // the VAD decided speech had started) goes at once, so the stream is live, not behind.
          const wait = startedAt + sentMs - (this.options.leadMs ?? DEFAULT_LEAD_MS) - this.clock.now();
          if (wait > 0) {
            try {
              await this.clock.sleep(wait, this.stop.signal);
            } catch {
              return;
            }
          }
        }
        startedAt ??= this.clock.now();
        const chunk = this.take(Math.min(this.chunkSamples, this.queued));
        this.ws.send(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        sentMs += (chunk.length * 1000) / SAMPLE_RATE;
        continue;
      }
      if (this.ending) {
        this.ws.send(JSON.stringify({ is_speaking: false }));
        this.endSent = true;
        return;
      }
      await this.idle();
    }
  }

  private receive(raw: string) {
    let message: FunAsrResult;
    try {
      message = JSON.parse(raw);
    } catch {
      return this.fail(
        fail(
          'bad_request',
          `${VENDOR}的应答格式不正确，请确认${RECOGNITION_SERVICE.profile}中的服务地址指向 FunASR websocket 服务`,
        ),
      );
    }
    if (!message || typeof message !== 'object') return;
    const text = typeof message.text === 'string' ? message.text : '';
    if (typeof message.error === 'string' && message.error) {
      return this.fail(
        fail(
          'upstream',
          `${VENDOR}识别出错：${redact(message.error, this.options.token)}，请检查 FunASR 服务日志`,
        ),
      );
    }
    // The C++ server's only error result (a non-PCM stream), sent as if it were the text.
    if (text.startsWith('ERROR.')) {
      return this.fail(fail('bad_request', `${VENDOR}拒绝了音频：${redact(text, this.options.token)}`));
    }
    if (message.mode === '2pass-offline' || message.mode === 'offline') {
      if (text) this.sentences.push(text);
      this.online = '';
    } else {
      this.online += text;
    }
    this.partial();
    if (this.endSent && (message.is_final === true || message.mode === 'offline')) this.complete();
  }

  private current() {
    return this.sentences.join('') + this.online;
  }

  private partial() {
    const text = this.current().trim();
    if (text === this.lastPartial || this.settled) return;
    this.lastPartial = text;
    for (const listener of this.listeners) {
      try {
        listener(text);
      } catch {
        // A listener's bug belongs to the leg; it must not tear down the recognition.
      }
    }
  }

  private complete() {
    if (this.settled) return;
    this.settled = true;
    this.resolveResult({
      text: this.current().trim(),
      durationMs: Math.round((this.written * 1000) / SAMPLE_RATE),
    });
    this.shutdown();
  }
}

/**
 * Settles `connection` within `timeoutMs` on `clock`, counted from when `start` resolves, and
 * rejects with the caller's reason when `signal` aborts.
 */
async function withinTimeout(
  connection: FunAsrConnection,
  start: Promise<unknown>,
  timeoutMs: number,
  clock: Clock,
  signal: AbortSignal | undefined,
): Promise<Transcript> {
  const stopTimer = new AbortController();
  const onAbort = () => connection.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  start.then(
    () =>
      clock.sleep(timeoutMs, stopTimer.signal).then(
        () => connection.abort(providerTimeout(timeoutMs, RECOGNITION_SERVICE)),
        () => {},
      ),
    () => {},
  );
  try {
    return await connection.result;
  } finally {
    stopTimer.abort();
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Speech recognition on a self-hosted FunASR runtime (2pass/online streaming, offline utterances). */
export function createFunAsrRecognizer(options: FunAsrRecognizerOptions): SpeechRecognizer {
  if (!/^wss?:\/\//i.test(options.url)) {
    throw fail(
      'bad_request',
      `${VENDOR}的地址应以 ws:// 或 wss:// 开头，请检查${RECOGNITION_SERVICE.profile}中的服务地址`,
    );
  }
  const timeoutMs = options.timeoutMs ?? RECOGNITION_TIMEOUT_MS;
  const clock = options.clock ?? systemClock;

  return {
    async transcribe(utterance: TelephonyUtterance, recognition: RecognitionOptions): Promise<Transcript> {
      const empty = emptyOrChecked(utterance, recognition);
      if (empty) return empty;
      const connection = new FunAsrConnection(options, {
        mode: 'offline',
        hotwords: funAsrHotwords(recognition.prompt, options.hotwords),
        paced: false,
      });
      connection.write(utterance.pcm);
      const result = withinTimeout(connection, Promise.resolve(), timeoutMs, clock, recognition.signal);
      connection.end();
      return result;
    },

    openSession(recognition: RecognitionOptions): RecognitionSession {
      const connection = new FunAsrConnection(options, {
        mode: options.mode ?? '2pass',
        hotwords: funAsrHotwords(recognition.prompt, options.hotwords),
        paced: true,
      });
      let finishing: Promise<Transcript> | undefined;
      let finished: () => void = () => {};
      const finishCalled = new Promise<void>((resolve) => {
        finished = resolve;
      });
      // The wait for the final starts at finish(): a session may stay open as long as the caller talks.
      const result = withinTimeout(connection, finishCalled, timeoutMs, clock, recognition.signal);
      result.catch(() => {});
      if (recognition.signal?.aborted) connection.abort(recognition.signal.reason);
      return {
        write: (pcm) => connection.write(pcm),
        onPartial: (listener) => connection.onPartial(listener),
        finish() {
          finishing ??= (() => {
            connection.end();
            finished();
            return result;
          })();
          return finishing;
        },
        abort() {
          connection.abort(new DOMException('The recognition session was aborted', 'AbortError'));
        },
      };
    },
  };
}
