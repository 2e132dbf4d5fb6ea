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
import { RECOGNITION_SERVICE } from './openai-transcriber';
import { PcmChunks } from './pcm-chunks';
import {
  type StreamingSynthesizer,
  SYNTHESIS_SERVICE,
  type SynthesisOptions,
  type SynthesisVoice,
} from './synthesis';

/**
 * Aliyun 智能语音交互 streaming-text speech synthesis (流式文本语音合成, namespace
 * FlowingSpeechSynthesizer) over the NLS WebSocket gateway.
 *
 * Followed: help.aliyun.com "流式文本语音合成 WebSocket协议说明" (developer-reference/
 * streaming-text-tts-wss: header appkey/message_id/task_id/namespace/name, StartSynthesis payload
 * voice, format pcm|wav|mp3, sample_rate, volume 0~100 (default 50), speech_rate and pitch_rate
 * -500~500 with [-500, 0, 500] ↔ [0.5, 1.0, 2.0] times the normal rate), and the official SDKs for
 * what goes on the wire: aliyun/alibabacloud-nls-python-sdk nls/stream_input_tts.py (StartSynthesis →
 * SynthesisStarted, then RunSynthesis `{text}`, StopSynthesis without payload; SentenceBegin /
 * SentenceSynthesis / SentenceEnd / SynthesisCompleted / TaskFailed; binary frames are the audio;
 * the client shuts the socket after SynthesisCompleted), nls/core.py (token in the `X-NLS-Token`
 * handshake header, ids are uuid4 hex), and aliyun/alibabacloud-nls-cpp-sdk 3.x
 * (flowingSynthesizerRequest.h: "两次sendText()不超过10秒，否则会收到超时报错" – the gateway's idle
 * rule, TaskFailed 40000004; nlsGlobal.h: the gateway's status codes).
 *
 * Why the flowing namespace although the runtime sends one sentence at a time: it is the product
 * Aliyun sells for LLM replies (and its voices), and a sentence's RunSynthesis + StopSynthesis go
 * out together the moment SynthesisStarted arrives, so the only cost over the one-shot
 * SpeechSynthesizer is that one round trip, while the first audio still arrives as soon as the
 * first clause is rendered.
 */

export const ALIYUN_SYNTHESIS_GATEWAY_URL = 'wss://nls-gateway-cn-shanghai.aliyuncs.com/ws/v1';
const NAMESPACE = 'FlowingSpeechSynthesizer';
/** Until the first audio, and between two frames after it. */
export const ALIYUN_SYNTHESIS_TIMEOUT_MS = 8_000;

export interface AliyunSynthesizerOptions {
  /** The 智能语音交互 project's Appkey. */
  appKey: string;
  accessKeyId: string;
  /** Signs CreateToken; never sent anywhere itself. */
  accessKeySecret: string;
  /** Default the Shanghai gateway. */
  gatewayUrl?: string;
  /** CreateToken endpoint; default the Shanghai nls-meta. */
  tokenUrl?: string;
  /** -500~500, the vendor's default 0. */
  pitchRate?: number;
  clock?: Clock;
  /** How long the gateway may stay silent: before the first audio, and between frames. */
  timeoutMs?: number;
  /** Default: one cache for the whole process, shared with the recognisers. */
  tokens?: AliyunTokenCache;
}

const { name: SERVICE, profile: PROFILE } = SYNTHESIS_SERVICE;
const hex32 = () => randomBytes(16).toString('hex');

const fail = (kind: ProviderErrorKind, message: string, status?: number) =>
  new ProviderError(kind, message, status, SYNTHESIS_SERVICE.id);

/**
 * speed (0.5-2) → speech_rate (-500~500). Aliyun documents only the anchors 0.5 → -500, 1 → 0,
 * 2 → 500. Between them this follows the duration, 1 − 1/speed (×500 below normal, ×1000 above),
 * which meets the three anchors: a sentence at 0.8× lasts as much longer as one at 1.25× is shorter.
 */
export function aliyunSpeechRate(speed: number): number {
  const s = Math.min(2, Math.max(0.5, Number.isFinite(speed) ? speed : 1));
  const rate = s >= 1 ? (1 - 1 / s) * 1000 : (1 - 1 / s) * 500;
  return Math.round(Math.min(500, Math.max(-500, rate)));
}

/** 0-100 is the vendor's own scale. */
export const aliyunVolume = (volume: number) =>
  Math.round(Math.min(100, Math.max(0, Number.isFinite(volume) ? volume : 50)));

/** Status texts can quote the token ("The token 'xxx' is invalid"); nothing secret leaves. */
function redact(text: string, secrets: string[]): string {
  let out = text.replace(/token\s*'[^']*'/gi, "token '***'");
  for (const secret of secrets) if (secret) out = out.split(secret).join('***');
  return out.length > 160 ? `${out.slice(0, 160)}…` : out;
}

/** A TaskFailed as the console shows it, by the gateway's documented status codes. */
export function synthesisTaskFailure(
  status: number,
  statusText: string,
  secrets: string[] = [],
): ProviderError {
  const text = redact(statusText, secrets);
  const detail = `（${status}${text ? `：${text}` : ''}）`;
  switch (status) {
    case 40000001:
      if (/voice/i.test(statusText)) {
        return fail(
          'auth',
          `${SERVICE}（阿里云）无权使用该发音人${detail}，请在阿里云开通该发音人，或在助手设置中换一个音色`,
          status,
        );
      }
      return fail(
        'auth',
        `${SERVICE}（阿里云）拒绝了访问令牌${detail}，请检查${PROFILE}中的 AccessKey 与 Appkey`,
        status,
      );
    case 40000003:
      if (/voice/i.test(statusText)) {
        return fail(
          'bad_request',
          `${SERVICE}（阿里云）不认识该发音人${detail}，请检查助手设置中的音色`,
          status,
        );
      }
      if (/appkey/i.test(statusText)) {
        return fail(
          'auth',
          `${SERVICE}（阿里云）的 Appkey 无效${detail}，请检查${PROFILE}中的 Appkey`,
          status,
        );
      }
      return fail('bad_request', `${SERVICE}（阿里云）拒绝了合成参数${detail}，请检查${PROFILE}`, status);
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
      return fail('timeout', `${SERVICE}（阿里云）长时间没有收到合成指令，连接被服务端关闭${detail}`, status);
  }
  if (status >= 50000000)
    return fail('upstream', `${SERVICE}（阿里云）暂时不可用${detail}，请稍后再试`, status);
  return fail('bad_request', `${SERVICE}（阿里云）拒绝了合成请求${detail}，请检查${PROFILE}`, status);
}

/**
 * CreateToken is shared with the recognisers (same AccessKey, same cache), so its errors name the
 * recognition service; a synthesis caller must see its own service and profile instead.
 */
function asSynthesisError(err: unknown): unknown {
  if (!(err instanceof ProviderError) || err.service !== RECOGNITION_SERVICE.id) return err;
  const message = err.message
    .split(RECOGNITION_SERVICE.name)
    .join(SERVICE)
    .split(RECOGNITION_SERVICE.profile)
    .join(PROFILE);
  return fail(err.kind, message, err.upstreamStatus);
}

/** The gateway refused the token: a cached one is fetched anew once before this becomes an error. */
class TokenRefused extends Error {
  constructor(readonly error: ProviderError) {
    super(error.message);
  }
}

const tokenRefusedError = (status?: number) =>
  fail(
    'auth',
    `${SERVICE}（阿里云）拒绝了访问令牌（令牌无效或已过期），请检查${PROFILE}中的 AccessKey 与 Appkey 是否属于同一账号`,
    status,
  );

interface Config {
  options: AliyunSynthesizerOptions;
  credentials: AliyunCredentials;
  gatewayUrl: string;
  tokens: AliyunTokenCache;
  clock: Clock;
  timeoutMs: number;
}

interface NlsEvent {
  header?: { name?: string; status?: number; status_text?: string; status_message?: string };
}

/** One StartSynthesis … SynthesisCompleted task on its own connection. */
class AliyunSynthesis {
  readonly chunks = new PcmChunks();
  private ws: WebSocket | undefined;
  private token = '';
  private readonly taskId = hex32();
  private synthesizing = false;
  private done = false;
  private started: { resolve: () => void; reject: (err: unknown) => void } | undefined;
  /** Cancels the silence deadline; replaced each time the gateway shows it is alive. */
  private quiet: AbortController | undefined;

  constructor(
    private readonly config: Config,
    private readonly text: string,
    private readonly voice: SynthesisVoice,
    private readonly options: SynthesisOptions,
  ) {
    const { signal } = options;
    if (signal?.aborted) {
      this.stop();
      return;
    }
    signal?.addEventListener('abort', this.stop, { once: true });
    void this.run();
  }

  /** Abort, hang-up or the caller leaving the loop: close at once, end quietly. */
  readonly stop = () => {
    if (this.done) return;
    this.chunks.stop();
    this.finish();
  };

  private async run() {
    this.arm();
    try {
      await this.connect();
    } catch (err) {
      this.fail(err);
    }
  }

  private async connect() {
    const { tokens, credentials, clock } = this.config;
    let retried = false;
    for (;;) {
      let token: string;
      let cached: boolean;
      try {
        ({ token, cached } = await tokens.get(credentials, { clock }));
      } catch (err) {
        throw asSynthesisError(err);
      }
      if (this.done) return;
      this.token = token;
      try {
        await this.open(token);
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

  /** Resolves once SynthesisStarted arrived and the sentence went out. */
  private open(token: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.started = { resolve, reject };
      let ws: WebSocket;
      try {
        ws = new WebSocket(this.config.gatewayUrl, {
          headers: { 'X-NLS-Token': token },
          perMessageDeflate: false,
        });
      } catch {
        reject(
          fail(
            'bad_request',
            `${SERVICE}（阿里云）的网关地址格式不正确，请检查${PROFILE}中的网关地址（如 wss://…/ws/v1）`,
          ),
        );
        return;
      }
      this.ws = ws;
      let opened = false;
      const mine = () => this.ws === ws;
      ws.on('unexpected-response', (_req, res) => {
        res.resume();
        if (!mine()) return;
        const status = res.statusCode ?? 0;
        if (status === 401 || status === 403) reject(new TokenRefused(tokenRefusedError(status)));
        else if (status === 404) {
          reject(
            fail(
              'not_found',
              `${SERVICE}（阿里云）的网关地址不正确（HTTP 404），请检查${PROFILE}中的网关地址`,
              404,
            ),
          );
        } else {
          reject(
            fail('upstream', `${SERVICE}（阿里云）的网关拒绝了连接（HTTP ${status}），请稍后再试`, status),
          );
        }
      });
      ws.on('error', () => {
        // 'close' follows and says what it meant for the task.
      });
      ws.on('open', () => {
        if (!mine()) return;
        opened = true;
        ws.send(JSON.stringify({ header: this.header('StartSynthesis'), payload: this.startPayload() }));
      });
      ws.on('message', (data, isBinary) => {
        if (!mine() || this.done) return;
        const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
        if (isBinary) {
          this.arm();
          this.chunks.push(bytes);
          return;
        }
        this.handle(bytes.toString('utf8'));
      });
      ws.on('close', () => {
        if (!mine() || this.done) return;
        const error = opened
          ? fail('network', `与${SERVICE}（阿里云）的连接意外断开，请稍后再试`)
          : fail('network', `无法连接${SERVICE}（阿里云），请检查${PROFILE}中的网关地址与网络`);
        if (this.synthesizing) this.fail(error);
        else reject(error);
      });
    });
  }

  private header(name: string) {
    return {
      message_id: hex32(),
      task_id: this.taskId,
      namespace: NAMESPACE,
      name,
      appkey: this.config.options.appKey,
    };
  }

  private startPayload() {
    return {
      voice: this.voice.voiceId,
      format: 'pcm',
      sample_rate: this.options.sampleRate,
      volume: aliyunVolume(this.voice.volume),
      speech_rate: aliyunSpeechRate(this.voice.speed),
      pitch_rate: Math.round(Math.min(500, Math.max(-500, this.config.options.pitchRate ?? 0))),
    };
  }

  private handle(raw: string) {
    let event: NlsEvent;
    try {
      event = JSON.parse(raw) as NlsEvent;
    } catch {
      return;
    }
    this.arm();
    const header = event.header ?? {};
    switch (header.name) {
      case 'SynthesisStarted':
        if (this.synthesizing) return;
        this.synthesizing = true;
        // The whole sentence, then its end at once: the gateway's idle rule never runs while the
        // runtime waits for the next sentence, because that one gets its own task.
        this.ws?.send(JSON.stringify({ header: this.header('RunSynthesis'), payload: { text: this.text } }));
        this.ws?.send(JSON.stringify({ header: this.header('StopSynthesis') }));
        this.started?.resolve();
        return;
      case 'SynthesisCompleted':
        this.chunks.end();
        this.finish();
        return;
      case 'TaskFailed': {
        const status = header.status ?? 0;
        const statusText = header.status_text ?? header.status_message ?? '';
        const error = synthesisTaskFailure(status, statusText, this.secrets());
        if (status === 40000001 && !this.synthesizing && !/voice/i.test(statusText)) {
          this.started?.reject(new TokenRefused(error));
        } else if (this.synthesizing) this.fail(error);
        else this.started?.reject(error);
        return;
      }
    }
  }

  private secrets() {
    return [this.token, this.config.credentials.accessKeySecret];
  }

  /** Fails the task with a timeout unless the gateway sends something within the timeout. */
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
    // A connect still waiting for SynthesisStarted gives up (its socket is closed below).
    this.started?.reject(new Error('synthesis finished'));
    this.quiet?.abort();
    this.options.signal?.removeEventListener('abort', this.stop);
    this.close();
  }

  private close() {
    const ws = this.ws;
    this.ws = undefined;
    if (!ws) return;
    if (ws.readyState === WebSocket.OPEN) ws.close(1000);
    else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
  }
}

/**
 * A synthesiser on Aliyun NLS streaming synthesis: each `stream` is one task on its own connection,
 * yielding the gateway's PCM frames as they arrive.
 */
export function createAliyunSynthesizer(options: AliyunSynthesizerOptions): StreamingSynthesizer {
  const config: Config = {
    options,
    credentials: {
      accessKeyId: options.accessKeyId,
      accessKeySecret: options.accessKeySecret,
      tokenUrl: options.tokenUrl ?? ALIYUN_TOKEN_URL,
    },
    gatewayUrl: options.gatewayUrl ?? ALIYUN_SYNTHESIS_GATEWAY_URL,
    tokens: options.tokens ?? sharedAliyunTokens,
    clock: options.clock ?? systemClock,
    timeoutMs: options.timeoutMs ?? ALIYUN_SYNTHESIS_TIMEOUT_MS,
  };

  async function* stream(
    text: string,
    voice: SynthesisVoice,
    synthesis: SynthesisOptions,
  ): AsyncGenerator<Int16Array> {
    if (!options.appKey || !options.accessKeyId || !options.accessKeySecret) {
      throw fail('auth', `${PROFILE}缺少阿里云 Appkey、AccessKey ID 或 AccessKey Secret`);
    }
    if (!voice.voiceId.trim()) {
      throw fail('bad_request', `没有选择阿里云发音人，请在助手设置中选择音色（如 xiaoyun）`);
    }
    if (!text.trim() || synthesis.signal?.aborted) return;
    const task = new AliyunSynthesis(config, text, voice, synthesis);
    try {
      yield* task.chunks.drain();
    } finally {
      task.stop();
    }
  }

  return { stream };
}
