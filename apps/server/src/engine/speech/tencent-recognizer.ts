import { createHmac, randomInt, randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { ProviderError, type ProviderErrorKind, providerTimeout } from '../brain/openai-client';
import { type Clock, systemClock } from '../clock';
import { RECOGNITION_SERVICE, RECOGNITION_TIMEOUT_MS } from './openai-transcriber';
import type { RecognitionOptions, RecognitionSession, SpeechRecognizer, Transcript } from './types';
import { transcribeBySession } from './utterance';

/*
 * Tencent Cloud real-time speech recognition (实时语音识别 WebSocket, "API 2.0"), as published at
 * https://cloud.tencent.com/document/product/1093/48982 (the page's 2025 text: request parameters,
 * the three signing steps, `{"type": "end"}`, slice_type 0/1/2, `final: 1`, and the error table
 * with 4000 "请1秒内最多发送3秒音频数据" and 4008 "客户端超过15秒未发送音频数据"). Checked against
 * the official SDKs, which sign the raw parameter values and URL-encode them only in the URL:
 * TencentCloud/tencentcloud-speech-sdk-python asr/speech_recognizer.py (a17cdaa),
 * TencentCloud/tencentcloud-speech-sdk-go asr/speechrecognizer.go (b5b8e32) and
 * TencentCloud/tencentcloud-speech-sdk-java asrv2/SpeechRecognizer.java.
 */

const DEFAULT_HOST = 'asr.cloud.tencent.com';
const SAMPLE_RATE = 8000;
/** The documented packet: 40 ms of 8 kHz 16-bit PCM. */
export const TENCENT_PACKET_BYTES = 640;
const bytesToMs = (bytes: number) => (bytes / 2 / SAMPLE_RATE) * 1000;

/**
 * How far ahead of real time the client may run. Tencent rejects more than 3 s of audio in any
 * second (4000) and recommends 1:1; a 1 s bucket refilled at 1:1 never puts more than 2 s in a
 * second on the wire, yet lets a buffered utterance (or the audio queued while connecting) go out
 * at once instead of making the caller wait its full length again.
 */
export const TENCENT_BURST_MS = 1000;

const LABEL = '腾讯云语音识别';

export interface TencentHotword {
  word: string;
  /** 1–10 ordinary, 11 super hotword, 100 homophone replacement (Tencent's scale). */
  weight: number;
}

export interface TencentRecognizerOptions {
  /** The account's AppID (digits), part of the URL path. */
  appId: string;
  secretId: string;
  /** Signs the URL; never sent, never in an error. */
  secretKey: string;
  /** engine_model_type. Telephone audio is 8 kHz: '8k_zh' (default) or '8k_zh_large'. */
  engine?: string;
  /** `asr.cloud.tencent.com` (default, over wss) or a full `ws://host:port` URL, as tests use. */
  host?: string;
  /** The profile's standing hotwords; the assistant's own words (RecognitionOptions.prompt) join them. */
  hotwords?: readonly (string | TencentHotword)[];
  /** A hotword table made in the Tencent console; Tencent prefers hotword_list when both are sent. */
  hotwordId?: string;
  /** vad_silence_time (240–2000 ms): the pause that ends a sentence. Unset: Tencent's 1000 ms. */
  vadSilenceMs?: number;
  /** How long the handshake, and the final result after the last audio, may take. */
  timeoutMs?: number;
  /** See TENCENT_BURST_MS; tests shrink it. */
  burstMs?: number;
  /** Timeouts, pacing and the signature's timestamp run on this clock. */
  clock?: Clock;
}

// ---- Signing ----

/** Base64(HMAC-SHA1(secretKey, signString)): step 2 of 签名生成. */
export function tencentSignature(signString: string, secretKey: string): string {
  return createHmac('sha1', secretKey).update(signString, 'utf8').digest('base64');
}

/**
 * The request URL: parameters sorted by name, signed over `host/path?k=v&...` with the raw values
 * (no scheme), then every value and the signature URL-encoded. The docs' worked example is a test.
 */
export function tencentRecognitionUrl(
  endpoint: string,
  appId: string,
  params: Record<string, string>,
  secretKey: string,
): string {
  const base = new URL(endpoint);
  const path = `${base.pathname.replace(/\/+$/, '')}/asr/v2/${appId}`;
  const keys = Object.keys(params).sort();
  const raw = keys.map((key) => `${key}=${params[key]}`).join('&');
  const encoded = keys.map((key) => `${key}=${encodeURIComponent(params[key] as string)}`).join('&');
  const signature = tencentSignature(`${base.host}${path}?${raw}`, secretKey);
  return `${base.protocol}//${base.host}${path}?${encoded}&signature=${encodeURIComponent(signature)}`;
}

// ---- Hotwords ----

const HAN = /\p{Script=Han}/gu;
const validWeight = (weight: number) =>
  (Number.isInteger(weight) && weight >= 1 && weight <= 11) || weight === 100;

/**
 * hotword_list: "词|权重,词|权重". Tencent refuses the whole request (4001) for one bad entry, so
 * entries it would refuse are left out rather than sent: a word over 30 characters or 10 汉字, one
 * holding the separators or a space, past the 128th. Words without a usable weight get 10, the
 * strongest that does not raise the error rate of everything else (11 and 100 do).
 */
export function tencentHotwordList(entries: readonly (string | TencentHotword)[]): string | undefined {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const entry of entries) {
    const word = (typeof entry === 'string' ? entry : entry.word).trim();
    const weight = typeof entry === 'string' || !validWeight(entry.weight) ? 10 : entry.weight;
    if (!word || /[|,\s]/.test(word) || word.length > 30 || (word.match(HAN)?.length ?? 0) > 10) continue;
    if (seen.has(word)) continue;
    seen.add(word);
    out.push(`${word}|${weight}`);
    if (out.length === 128) break;
  }
  return out.length ? out.join(',') : undefined;
}

/** The assistant's hotwords arrive as one prompt string (product names, titles): split it into words. */
const promptWords = (prompt: string | undefined) => (prompt ?? '').split(/[\s,，、;；|]+/).filter(Boolean);

// ---- Errors ----

function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('***');
  return out.length > 160 ? `${out.slice(0, 160)}…` : out;
}

const fail = (kind: ProviderErrorKind, message: string, status?: number) =>
  new ProviderError(kind, message, status, RECOGNITION_SERVICE.id);

const checkKeys = `请检查${RECOGNITION_SERVICE.profile}中的 AppID、SecretId 和 SecretKey`;

/** A non-zero `code` from Tencent (handshake or mid-stream) as the console shows it. */
export function tencentError(code: number, upstream: string, secrets: readonly string[]): ProviderError {
  const detail = upstream ? `：${redact(upstream, secrets)}` : '';
  switch (code) {
    case 4002:
      return fail('auth', `${LABEL}鉴权失败（4002），${checkKeys}`);
    case 4003:
      return fail(
        'auth',
        `${LABEL}服务未开通（4003），请在腾讯云控制台为该 AppID 开通实时语音识别，或检查${RECOGNITION_SERVICE.profile}中的 AppID`,
      );
    case 4004:
      return fail('rate_limit', `${LABEL}资源包已用尽（4004），请开通后付费或购买资源包`);
    case 4005:
      return fail('rate_limit', `腾讯云账户已欠费（4005），${LABEL}已停止服务，请充值后再试`);
    case 4006:
      return fail('rate_limit', `${LABEL}并发路数已达上限（4006），请稍后再试或提高并发额度`);
    case 4000:
      return fail('bad_request', `发送给${LABEL}的音频快于实时速率（4000）${detail}`);
    case 4001:
      return fail(
        'bad_request',
        `${LABEL}拒绝了请求参数（4001）${detail}，请检查${RECOGNITION_SERVICE.profile}中的识别引擎与热词`,
      );
    case 4007:
      return fail('bad_request', `${LABEL}无法解码音频（4007），请确认发送的是 8 kHz 16 位 PCM`);
    case 4008:
      return fail('timeout', `${LABEL}长时间未收到音频，已断开连接（4008）`);
    case 6001:
      return fail(
        'network',
        `${LABEL}拒绝了境外调用（6001）：境外服务器请使用腾讯云国际站，国内服务器请关闭代理`,
      );
    default:
      if (code >= 5000 && code < 6000) return fail('upstream', `${LABEL}暂时不可用（${code}），请稍后再试`);
      return fail('upstream', `${LABEL}返回错误（${code}）${detail}`);
  }
}

/** What `ws` reports before any Tencent message: a refused upgrade or no connection at all. */
function connectionError(err: Error): ProviderError {
  const status = Number(/Unexpected server response: (\d+)/.exec(err.message)?.[1]);
  if (status === 401 || status === 403)
    return fail('auth', `${LABEL}拒绝了连接（HTTP ${status}），${checkKeys}`, status);
  if (status >= 500) return fail('upstream', `${LABEL}暂时不可用（HTTP ${status}），请稍后再试`, status);
  if (status) {
    return fail(
      'bad_request',
      `${LABEL}拒绝了连接（HTTP ${status}），请确认接口地址指向腾讯云实时语音识别`,
      status,
    );
  }
  return fail('network', `无法连接${LABEL}服务，请检查接口地址是否正确、网络是否可用`);
}

const abortError = () => Object.assign(new Error('语音识别已取消'), { name: 'AbortError' });

// ---- The session ----

interface TencentMessage {
  code?: unknown;
  message?: unknown;
  final?: unknown;
  result?: { slice_type?: unknown; index?: unknown; voice_text_str?: unknown };
}

type Phase = 'connecting' | 'streaming' | 'done' | 'failed' | 'aborted';

class TencentSession implements RecognitionSession {
  private phase: Phase = 'connecting';
  private ws: WebSocket | null = null;
  private pending = Buffer.alloc(0);
  private writtenBytes = 0;
  private ending = false;
  private endSent = false;
  private waitingForTokens = false;
  private tokensMs = 0;
  private refilledAt = 0;
  /** Each sentence's latest text by Tencent's `index`; the transcript is all of them in order. */
  private readonly sentences = new Map<number, string>();
  private lastPartial = '';
  private readonly listeners: ((text: string) => void)[] = [];
  private outcome: { ok: true; transcript: Transcript } | { ok: false; error: unknown } | null = null;
  private settle: ((value: Transcript | PromiseLike<Transcript>) => void) | null = null;
  private reject: ((err: unknown) => void) | null = null;
  private finished: Promise<Transcript> | null = null;
  /** Aborted when the session ends, cancelling its timers. */
  private readonly life = new AbortController();

  constructor(
    private readonly config: Required<Omit<TencentRecognizerOptions, 'hotwordId' | 'vadSilenceMs'>> &
      Pick<TencentRecognizerOptions, 'hotwordId' | 'vadSilenceMs'>,
    recognition: RecognitionOptions,
  ) {
    const signal = recognition.signal;
    if (signal?.aborted) {
      this.end({ ok: false, error: signal.reason }, 'aborted');
      return;
    }
    signal?.addEventListener('abort', () => this.stop(signal.reason), {
      once: true,
      signal: this.life.signal,
    });
    this.connect(recognition);
  }

  write(pcm: Int16Array): void {
    if (this.ending || this.isOver()) return;
    // A copy: the media loop may reuse its frame. Node runs on little-endian hosts only, which
    // is the byte order Tencent's pcm format expects.
    const bytes = Buffer.from(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength));
    this.pending = this.pending.length ? Buffer.concat([this.pending, bytes]) : bytes;
    this.writtenBytes += bytes.length;
    this.pump();
  }

  onPartial(listener: (text: string) => void): void {
    this.listeners.push(listener);
  }

  finish(): Promise<Transcript> {
    if (!this.finished) {
      this.finished = new Promise<Transcript>((resolve, reject) => {
        this.settle = resolve;
        this.reject = reject;
      });
      this.ending = true;
      this.deliver();
      this.pump();
    }
    return this.finished;
  }

  abort(): void {
    this.stop(abortError());
  }

  private stop(reason: unknown) {
    if (this.isOver()) return;
    this.end({ ok: false, error: reason }, 'aborted');
  }

  private isOver() {
    return this.phase === 'done' || this.phase === 'failed' || this.phase === 'aborted';
  }

  private connect(recognition: RecognitionOptions) {
    const { config } = this;
    if (!config.appId || !config.secretId || !config.secretKey) {
      this.failWith(fail('auth', `${RECOGNITION_SERVICE.profile}缺少腾讯云 AppID、SecretId 或 SecretKey`));
      return;
    }
    if (!/^\d+$/.test(config.appId)) {
      this.failWith(
        fail('bad_request', `腾讯云 AppID 应为数字，请检查${RECOGNITION_SERVICE.profile}中的 AppID`),
      );
      return;
    }
    const timestamp = Math.floor(config.clock.now() / 1000);
    const params: Record<string, string> = {
      secretid: config.secretId,
      timestamp: String(timestamp),
      // A day, as Tencent's SDKs sign; the URL is used once, at once.
      expired: String(timestamp + 86_400),
      nonce: String(randomInt(1, 10_000_000_000)),
      engine_model_type: config.engine,
      voice_id: randomUUID(),
      voice_format: '1',
      // Tencent splits sentences itself only with its VAD on, and forces a cut at 60 s without it.
      needvad: '1',
    };
    const hotwords = tencentHotwordList([...config.hotwords, ...promptWords(recognition.prompt)]);
    if (hotwords) params.hotword_list = hotwords;
    if (config.hotwordId) params.hotword_id = config.hotwordId;
    if (config.vadSilenceMs !== undefined) params.vad_silence_time = String(Math.round(config.vadSilenceMs));

    const endpoint = config.host.includes('://') ? config.host : `wss://${config.host}`;
    let ws: WebSocket;
    try {
      ws = new WebSocket(tencentRecognitionUrl(endpoint, config.appId, params, config.secretKey), {
        perMessageDeflate: false,
      });
    } catch {
      // ws's own message would quote the signed URL.
      this.failWith(fail('bad_request', `${RECOGNITION_SERVICE.profile}中的腾讯云接口地址无效`));
      return;
    }
    this.ws = ws;
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.receive(data.toString());
    });
    ws.on('error', (err) => this.failWith(connectionError(err)));
    ws.on('close', () => {
      if (!this.isOver()) this.failWith(fail('upstream', `${LABEL}连接意外断开，请稍后再试`));
    });
    this.deadline('handshake');
  }

  /** Fails the session with a timeout unless it has moved past `stage` by then. */
  private deadline(stage: 'handshake' | 'final') {
    this.config.clock.sleep(this.config.timeoutMs, this.life.signal).then(
      () => {
        const stuck = stage === 'handshake' ? this.phase === 'connecting' : !this.isOver();
        if (stuck) this.failWith(providerTimeout(this.config.timeoutMs, RECOGNITION_SERVICE));
      },
      () => {},
    );
  }

  private receive(text: string) {
    if (this.isOver()) return;
    let message: TencentMessage;
    try {
      message = JSON.parse(text) as TencentMessage;
    } catch {
      this.failWith(fail('bad_request', `${LABEL}的应答格式不正确，请确认接口地址指向腾讯云实时语音识别`));
      return;
    }
    const code = Number(message.code);
    if (code !== 0) {
      const upstream = typeof message.message === 'string' ? message.message : '';
      this.failWith(tencentError(Number.isFinite(code) ? code : -1, upstream, this.secrets()));
      return;
    }
    if (this.phase === 'connecting') {
      // The first message is the handshake's verdict; audio waits for it.
      this.phase = 'streaming';
      this.tokensMs = this.config.burstMs;
      this.refilledAt = this.config.clock.now();
      this.pump();
      return;
    }
    const result = message.result;
    if (result && typeof result.voice_text_str === 'string') {
      this.sentences.set(Number(result.index) || 0, result.voice_text_str);
      const partial = this.text();
      if (partial !== this.lastPartial) {
        this.lastPartial = partial;
        for (const listener of this.listeners) {
          try {
            listener(partial);
          } catch {
            // A listener's bug must not cost the caller the recognition.
          }
        }
      }
    }
    // The virtual-number variant of this API sends "1" as a string.
    if (Number(message.final) === 1) {
      this.end({ ok: true, transcript: { text: this.text().trim(), durationMs: this.durationMs() } }, 'done');
    }
  }

  private text() {
    return [...this.sentences.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, sentence]) => sentence)
      .join('');
  }

  private durationMs() {
    return Math.round(bytesToMs(this.writtenBytes));
  }

  /**
   * Sends whole 40 ms packets as the token bucket allows (the remainder once finishing), then the
   * end message. Runs again on every write and whenever the bucket has refilled enough.
   */
  private pump() {
    if (this.phase !== 'streaming' || this.waitingForTokens || !this.ws) return;
    const clock = this.config.clock;
    while (this.pending.length >= TENCENT_PACKET_BYTES || (this.ending && this.pending.length > 0)) {
      const size = Math.min(TENCENT_PACKET_BYTES, this.pending.length);
      const needMs = bytesToMs(size);
      const now = clock.now();
      this.tokensMs = Math.min(this.config.burstMs, this.tokensMs + (now - this.refilledAt));
      this.refilledAt = now;
      if (this.tokensMs < needMs) {
        this.waitingForTokens = true;
        clock.sleep(Math.ceil(needMs - this.tokensMs), this.life.signal).then(
          () => {
            this.waitingForTokens = false;
            this.pump();
          },
          () => {},
        );
        return;
      }
      this.tokensMs -= needMs;
      this.ws.send(this.pending.subarray(0, size));
      this.pending = this.pending.subarray(size);
    }
    if (this.ending && !this.endSent) {
      this.endSent = true;
      this.ws.send(JSON.stringify({ type: 'end' }));
      this.deadline('final');
    }
  }

  private secrets() {
    return [this.config.secretKey, this.config.secretId];
  }

  private failWith(error: unknown) {
    if (this.isOver()) return;
    this.end({ ok: false, error }, 'failed');
  }

  private end(outcome: NonNullable<TencentSession['outcome']>, phase: Phase) {
    this.phase = phase;
    this.outcome = outcome;
    this.life.abort();
    this.pending = Buffer.alloc(0);
    const ws = this.ws;
    if (ws) {
      // A closed socket is what tells Tencent (and its concurrency count) the stream is over.
      if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
    }
    this.deliver();
  }

  /** Settles finish() once both it has been called and the outcome is known. */
  private deliver() {
    const outcome = this.outcome;
    if (!outcome || !this.settle || !this.reject) return;
    if (outcome.ok) this.settle(outcome.transcript);
    else this.reject(outcome.error);
    this.settle = null;
    this.reject = null;
  }
}

/**
 * Tencent Cloud 实时语音识别 for telephone audio: a signed WebSocket per utterance or per session,
 * audio paced in 40 ms packets, partial results as the caller speaks. Failures are ProviderErrors
 * (service 'speech_recognition', Chinese, never carrying the SecretKey).
 */
export function createTencentRecognizer(options: TencentRecognizerOptions): SpeechRecognizer {
  const config = {
    appId: options.appId.trim(),
    secretId: options.secretId.trim(),
    secretKey: options.secretKey,
    engine: options.engine ?? '8k_zh',
    host: options.host ?? DEFAULT_HOST,
    hotwords: options.hotwords ?? [],
    hotwordId: options.hotwordId,
    vadSilenceMs: options.vadSilenceMs,
    timeoutMs: options.timeoutMs ?? RECOGNITION_TIMEOUT_MS,
    burstMs: options.burstMs ?? TENCENT_BURST_MS,
    clock: options.clock ?? systemClock,
  };
  const openSession = (recognition: RecognitionOptions): RecognitionSession =>
    new TencentSession(config, recognition);

  return {
    // An empty utterance never opens a connection: Tencent would bill one to say so.
    transcribe: (utterance, recognition) => transcribeBySession(openSession, utterance, recognition),
    openSession,
  };
}
