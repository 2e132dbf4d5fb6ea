import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';
import { ProviderError, type ProviderErrorKind, providerTimeout } from '../brain/openai-client';
import { type Clock, systemClock } from '../clock';
import { PcmChunks } from './pcm-chunks';
import {
  type StreamingSynthesizer,
  SYNTHESIS_SERVICE,
  type SynthesisOptions,
  type SynthesisVoice,
} from './synthesis';
import { tencentSignature } from './tencent-recognizer';

/**
 * Tencent Cloud 实时语音合成 over WebSocket (`wss://tts.cloud.tencent.com/stream_ws`,
 * Action=TextToStreamAudioWS), as published at https://cloud.tencent.com/document/product/1073/37933
 * (the 2025 text: 16 kHz or 8 kHz 16-bit mono, pcm or mp3; binary frames carry the audio, text
 * frames JSON `{code, message, session_id, request_id, message_id, result: {subtitles}, final}`;
 * `final: 1` ends the text and the client closes the socket) and checked against the official SDKs,
 * which sign "GET" + host + path + "?" + the parameters sorted by name with their raw values and
 * URL-encode only in the URL: TencentCloud/tencentcloud-speech-sdk-python tts/speech_synthesizer_ws.py
 * (a17cdaa) and TencentCloud/tencentcloud-speech-sdk-go tts/speechwssynthesizer.go (b5b8e32: the
 * first text frame is the handshake's verdict, ModelType=1, Expired = Timestamp + one day). Speed
 * and Volume scales are the ones the product documents for its synthesis APIs (document 1073/57373:
 * Speed [-2, 6] with -2 → 0.6×, -1 → 0.8×, 0 → 1×, 1 → 1.2×, 2 → 1.5×, 6 → 2.5×; Volume [-10, 10],
 * 0 normal).
 *
 * Why v1 and not the streaming-text `stream_wsv2` (TextToStreamAudioWSv2): the runtime already cuts
 * the reply into sentences and asks for one at a time, and v1 carries the sentence in the signed URL,
 * so the first audio needs no round trip after the handshake, where v2 has the client wait for
 * `ready`, then send ACTION_SYNTHESIS and ACTION_COMPLETE. v1 is still the documented 实时语音合成 API
 * and shares v2's voices and concurrency quota.
 */

const DEFAULT_HOST = 'tts.cloud.tencent.com';
const PATH = '/stream_ws';
const ACTION = 'TextToStreamAudioWS';
const LABEL = '腾讯云语音合成';
/** Until the first audio, and between two frames after it. */
export const TENCENT_SYNTHESIS_TIMEOUT_MS = 8_000;

export interface TencentSynthesizerOptions {
  /** The account's AppID (digits). */
  appId: string;
  secretId: string;
  /** Signs the URL; never sent, never in an error. */
  secretKey: string;
  /** `tts.cloud.tencent.com` (default, over wss) or a full `ws://host:port` URL, as tests use. */
  host?: string;
  /** Timeouts and the signature's timestamp run on this clock. */
  clock?: Clock;
  /** How long the service may stay silent: before the first audio, and between frames. */
  timeoutMs?: number;
}

const { profile: PROFILE } = SYNTHESIS_SERVICE;
const checkKeys = `请检查${PROFILE}中的 AppID、SecretId 和 SecretKey`;

const fail = (kind: ProviderErrorKind, message: string, status?: number) =>
  new ProviderError(kind, message, status, SYNTHESIS_SERVICE.id);

// ---- Voice settings ----

/** Documented Speed values and the rate each one plays at. */
const SPEED_ANCHORS: readonly (readonly [rate: number, speed: number])[] = [
  [0.6, -2],
  [0.8, -1],
  [1, 0],
  [1.2, 1],
  [1.5, 2],
  [2.5, 6],
];

/**
 * speed (0.5-2 times normal) → Tencent's Speed, linear between the documented points (2 decimals,
 * as the API allows). 0.5 is slower than Tencent's slowest, so it gets -2 (0.6×).
 */
export function tencentSpeed(speed: number): number {
  const s = Math.min(2, Math.max(0.5, Number.isFinite(speed) ? speed : 1));
  const first = SPEED_ANCHORS[0] as readonly [number, number];
  if (s <= first[0]) return first[1];
  for (let i = 1; i < SPEED_ANCHORS.length; i++) {
    const [r1, v1] = SPEED_ANCHORS[i] as readonly [number, number];
    const [r0, v0] = SPEED_ANCHORS[i - 1] as readonly [number, number];
    if (s <= r1) return Math.round((v0 + ((s - r0) / (r1 - r0)) * (v1 - v0)) * 100) / 100;
  }
  return 6;
}

/** volume 0-100 (50 = the voice's normal level) → Tencent's Volume -10..10 (0 = normal). */
export function tencentVolume(volume: number): number {
  const v = Math.min(100, Math.max(0, Number.isFinite(volume) ? volume : 50));
  return Math.round(((v - 50) / 5) * 100) / 100;
}

// ---- Signing ----

/**
 * The request URL: parameters sorted by name, signed as "GET" + host + path + "?" + `k=v&...` with
 * the raw values, then every value and the signature URL-encoded.
 */
export function tencentSynthesisUrl(
  endpoint: string,
  params: Record<string, string>,
  secretKey: string,
): string {
  const base = new URL(endpoint);
  const path = `${base.pathname.replace(/\/+$/, '')}${PATH}`;
  const keys = Object.keys(params).sort();
  const raw = keys.map((key) => `${key}=${params[key]}`).join('&');
  const encoded = keys.map((key) => `${key}=${encodeURIComponent(params[key] as string)}`).join('&');
  const signature = tencentSignature(`GET${base.host}${path}?${raw}`, secretKey);
  return `${base.protocol}//${base.host}${path}?${encoded}&Signature=${encodeURIComponent(signature)}`;
}

// ---- Errors ----

function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('***');
  return out.length > 160 ? `${out.slice(0, 160)}…` : out;
}

/**
 * A non-zero `code` from Tencent (handshake or mid-stream) as the console shows it. The codes are
 * the 实时语音 API 2.0 family (4001 parameters, 4002 authentication, 4003-4006 account and quota,
 * 4008 idle); 10003 is how the synthesis service has been seen to refuse a signature.
 */
export function tencentSynthesisError(
  code: number,
  upstream: string,
  secrets: readonly string[],
): ProviderError {
  const detail = upstream ? `：${redact(upstream, secrets)}` : '';
  switch (code) {
    case 4002:
    case 10003:
      return fail('auth', `${LABEL}鉴权失败（${code}），${checkKeys}`, code);
    case 4003:
      return fail(
        'auth',
        `${LABEL}服务未开通（4003），请在腾讯云控制台为该 AppID 开通语音合成，或检查${PROFILE}中的 AppID`,
        code,
      );
    case 4004:
      return fail('rate_limit', `${LABEL}资源包已用尽（4004），请开通后付费或购买资源包`, code);
    case 4005:
      return fail('rate_limit', `腾讯云账户已欠费（4005），${LABEL}已停止服务，请充值后再试`, code);
    case 4006:
      return fail('rate_limit', `${LABEL}并发路数已达上限（4006）${detail}，请稍后再试或提高并发额度`, code);
    case 4001:
      return fail(
        'bad_request',
        `${LABEL}拒绝了请求参数（4001）${detail}，请检查助手设置中的音色、语速与音量`,
        code,
      );
    case 4008:
      return fail('timeout', `${LABEL}长时间没有收发数据，服务端已断开连接（4008）`, code);
  }
  if (/鉴权|签名|signature|auth/i.test(upstream)) {
    return fail('auth', `${LABEL}鉴权失败（${code}）${detail}，${checkKeys}`, code);
  }
  if (code >= 4000 && code < 5000) return fail('bad_request', `${LABEL}拒绝了请求（${code}）${detail}`, code);
  return fail('upstream', `${LABEL}暂时不可用（${code}）${detail}，请稍后再试`, code);
}

/** What `ws` reports before any Tencent message: a refused upgrade. */
function refusedUpgrade(status: number): ProviderError {
  if (status === 401 || status === 403)
    return fail('auth', `${LABEL}拒绝了连接（HTTP ${status}），${checkKeys}`, status);
  if (status === 404) {
    return fail('not_found', `${LABEL}的接口地址不正确（HTTP 404），请检查${PROFILE}中的接口地址`, status);
  }
  if (status >= 500) return fail('upstream', `${LABEL}暂时不可用（HTTP ${status}），请稍后再试`, status);
  return fail(
    'bad_request',
    `${LABEL}拒绝了连接（HTTP ${status}），请确认接口地址指向腾讯云实时语音合成`,
    status,
  );
}

// ---- One synthesis ----

interface Config {
  appId: string;
  secretId: string;
  secretKey: string;
  endpoint: string;
  clock: Clock;
  timeoutMs: number;
}

interface TencentMessage {
  code?: unknown;
  message?: unknown;
  final?: unknown;
}

/** One signed connection: handshake verdict, audio frames, `final: 1`. */
class TencentSynthesis {
  readonly chunks = new PcmChunks();
  private ws: WebSocket | undefined;
  private done = false;
  private quiet: AbortController | undefined;

  constructor(
    private readonly config: Config,
    text: string,
    voice: SynthesisVoice,
    private readonly options: SynthesisOptions,
  ) {
    const { signal } = options;
    if (signal?.aborted) {
      this.stop();
      return;
    }
    signal?.addEventListener('abort', this.stop, { once: true });
    this.arm();
    this.connect(text, voice);
  }

  /** Abort, hang-up or the caller leaving the loop: close at once, end quietly. */
  readonly stop = () => {
    if (this.done) return;
    this.chunks.stop();
    this.finish();
  };

  private connect(text: string, voice: SynthesisVoice) {
    const { config } = this;
    const timestamp = Math.floor(config.clock.now() / 1000);
    const params: Record<string, string> = {
      Action: ACTION,
      AppId: config.appId,
      SecretId: config.secretId,
      Timestamp: String(timestamp),
      // A day, as Tencent's SDKs sign; the URL is used once, at once.
      Expired: String(timestamp + 86_400),
      SessionId: randomUUID(),
      Text: text,
      ModelType: '1',
      VoiceType: voice.voiceId.trim(),
      Codec: 'pcm',
      SampleRate: String(this.options.sampleRate),
      Speed: String(tencentSpeed(voice.speed)),
      Volume: String(tencentVolume(voice.volume)),
      EnableSubtitle: 'false',
    };
    let ws: WebSocket;
    try {
      ws = new WebSocket(tencentSynthesisUrl(config.endpoint, params, config.secretKey), {
        perMessageDeflate: false,
      });
    } catch {
      // ws's own message would quote the signed URL.
      this.fail(fail('bad_request', `${PROFILE}中的腾讯云接口地址无效`));
      return;
    }
    this.ws = ws;
    let opened = false;
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      this.fail(refusedUpgrade(res.statusCode ?? 0));
    });
    ws.on('error', () => {
      // 'close' follows and says what it meant for the synthesis.
    });
    ws.on('open', () => {
      opened = true;
    });
    ws.on('message', (data, isBinary) => {
      if (this.done) return;
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      this.arm();
      if (isBinary) this.chunks.push(bytes);
      else this.receive(bytes.toString('utf8'));
    });
    ws.on('close', () => {
      if (this.done) return;
      this.fail(
        opened
          ? fail('network', `与${LABEL}的连接意外断开，请稍后再试`)
          : fail('network', `无法连接${LABEL}服务，请检查${PROFILE}中的接口地址与网络`),
      );
    });
  }

  private receive(raw: string) {
    let message: TencentMessage;
    try {
      message = JSON.parse(raw) as TencentMessage;
    } catch {
      this.fail(fail('bad_request', `${LABEL}的应答格式不正确，请确认接口地址指向腾讯云实时语音合成`));
      return;
    }
    const code = Number(message.code);
    if (code !== 0) {
      const upstream = typeof message.message === 'string' ? message.message : '';
      this.fail(tencentSynthesisError(Number.isFinite(code) ? code : -1, upstream, this.secrets()));
      return;
    }
    if (Number(message.final) === 1) {
      this.chunks.end();
      this.finish();
    }
  }

  private secrets() {
    return [this.config.secretKey];
  }

  /** Fails the synthesis with a timeout unless Tencent sends something within the timeout. */
  private arm() {
    this.quiet?.abort();
    if (this.done) return;
    const quiet = new AbortController();
    this.quiet = quiet;
    const { clock, timeoutMs } = this.config;
    clock.sleep(timeoutMs, quiet.signal).then(
      () => this.fail(providerTimeout(timeoutMs, SYNTHESIS_SERVICE)),
      () => {},
    );
  }

  private fail(error: unknown) {
    if (this.done) return;
    this.chunks.fail(error);
    this.finish();
  }

  private finish() {
    this.done = true;
    this.quiet?.abort();
    this.options.signal?.removeEventListener('abort', this.stop);
    const ws = this.ws;
    this.ws = undefined;
    if (!ws) return;
    // Tencent asks the client to close after `final`, and a closed socket is what frees the
    // account's concurrency slot.
    if (ws.readyState === WebSocket.OPEN) ws.close(1000);
    else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
  }
}

/**
 * Tencent Cloud 实时语音合成: one signed connection per sentence, PCM yielded as Tencent sends it.
 * Failures are ProviderErrors (service 'speech_synthesis', Chinese, never carrying the SecretKey).
 */
export function createTencentSynthesizer(options: TencentSynthesizerOptions): StreamingSynthesizer {
  const host = options.host ?? DEFAULT_HOST;
  const config: Config = {
    appId: options.appId.trim(),
    secretId: options.secretId.trim(),
    secretKey: options.secretKey,
    endpoint: host.includes('://') ? host : `wss://${host}`,
    clock: options.clock ?? systemClock,
    timeoutMs: options.timeoutMs ?? TENCENT_SYNTHESIS_TIMEOUT_MS,
  };

  async function* stream(
    text: string,
    voice: SynthesisVoice,
    synthesis: SynthesisOptions,
  ): AsyncGenerator<Int16Array> {
    if (!config.appId || !config.secretId || !config.secretKey) {
      throw fail('auth', `${PROFILE}缺少腾讯云 AppID、SecretId 或 SecretKey`);
    }
    if (!/^\d+$/.test(config.appId)) {
      throw fail('bad_request', `腾讯云 AppID 应为数字，请检查${PROFILE}中的 AppID`);
    }
    if (!/^\d+$/.test(voice.voiceId.trim())) {
      throw fail('bad_request', `腾讯云音色 ID 应为数字（如 101001），请检查助手设置中的音色`);
    }
    if (!text.trim() || synthesis.signal?.aborted) return;
    const task = new TencentSynthesis(config, text, voice, synthesis);
    try {
      yield* task.chunks.drain();
    } finally {
      task.stop();
    }
  }

  return { stream };
}
