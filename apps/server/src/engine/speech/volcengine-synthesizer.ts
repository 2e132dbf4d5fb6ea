import { randomUUID } from 'node:crypto';
import { ProviderError, type ProviderErrorKind, providerTimeout } from '../brain/openai-client';
import { type Clock, clockDeadline, systemClock } from '../clock';
import type { StreamingSynthesizer, SynthesisOptions, SynthesisVoice } from './synthesis';
import { SYNTHESIS_SERVICE } from './synthesis';
import { VOLCENGINE_BASE_URL } from './volcengine-voice-clone';

/*
 * Volcengine (火山引擎豆包语音) speech synthesis over its HTTP API, "HTTP 非流式"
 * (volcengine.com/docs/6561/79823, the page shared with the V1 websocket): `POST {base}/api/v1/tts`
 * with `Authorization: Bearer;<Access Token>` and {app: {appid, token, cluster}, user: {uid},
 * audio: {voice_type, encoding, rate (8000/16000/24000), speed_ratio, volume_ratio},
 * request: {reqid (unique per call), text (≤ 1024 bytes UTF-8, < 300 characters advised),
 * operation: 'query'}}; answer {reqid, code (3000 = success), message, sequence, data (base64
 * audio), addition: {duration}}. The token in `app` is documented as a placeholder with no
 * authenticating role, so the real one travels only in the header. Voices cloned through
 * mega_tts are spoken with their speaker id as voice_type on cluster volcano_icl.
 */

const LABEL = '火山引擎语音合成';
const { profile: PROFILE } = SYNTHESIS_SERVICE;
const SYNTHESIS_TIMEOUT_MS = 10_000;
/** The doc advises under 300 characters a request; longer text is read in several requests. */
const MAX_PIECE_CHARS = 280;

export interface VolcengineSynthesizerOptions {
  appId: string;
  /** The Access Token; sent only in the Authorization header. */
  token: string;
  /** volcano_tts for preset voices, volcano_icl for voices cloned with the 2.0 effect. */
  cluster: string;
  /** `https://openspeech.bytedance.com` (default) or a stand-in's origin. */
  baseUrl?: string;
  clock?: Clock;
  /** Per request: how long a piece of text may take to come back as audio. */
  timeoutMs?: number;
}

const fail = (kind: ProviderErrorKind, message: string, status?: number) =>
  new ProviderError(kind, message, status, SYNTHESIS_SERVICE.id);

function redact(text: string, token: string): string {
  const out = (token ? text.split(token).join('***') : text).replace(/\s+/g, ' ').trim();
  return out.length > 120 ? `${out.slice(0, 120)}…` : out;
}

/** A code other than 3000, or a refused request, as the console shows it. */
export function volcengineSynthesisError(status: number, code: number, message: string, token: string) {
  const detail = message ? `：${redact(message, token)}` : '';
  if (status === 401 || status === 403 || /grant not found|authenticate request/i.test(message)) {
    return fail(
      'auth',
      `${LABEL}拒绝了 Access Token（HTTP ${status}），请检查${PROFILE}中的 APP ID 与 Access Token`,
      status,
    );
  }
  if (/access denied/i.test(message)) {
    return fail('auth', `${LABEL}未授权使用该音色，请在火山引擎控制台为该音色下单后再试`, status);
  }
  if (code === 3003 || /quota exceeded/i.test(message) || status === 429) {
    return fail('rate_limit', `${LABEL}并发或用量超限（${code || status}），请稍后再试或提高额度`, status);
  }
  if (code === 3050 || /Init Engine Instance failed/i.test(message)) {
    return fail(
      'not_found',
      `${LABEL}找不到该音色（${code}），请检查音色 ID 与${PROFILE}中的集群（复刻音色为 volcano_icl）`,
      status,
    );
  }
  if (code === 3010) return fail('bad_request', `${LABEL}拒绝了过长的文本（3010）`, status);
  if (code === 3011) return fail('bad_request', `${LABEL}无法朗读这段文本（3011）${detail}`, status);
  if (code === 3005 || code === 3030 || code === 3031 || code === 3032 || code === 3040 || status >= 500) {
    return fail('upstream', `${LABEL}暂时不可用（${code || `HTTP ${status}`}），请稍后再试`, status);
  }
  if (status === 404) {
    return fail('not_found', `${LABEL}找不到该接口（HTTP 404），请检查${PROFILE}中的接口地址`, status);
  }
  return fail('bad_request', `${LABEL}拒绝了请求（${code || `HTTP ${status}`}）${detail}`, status);
}

/** Sentence-sized pieces, cut after punctuation where possible. */
export function splitForVolcengine(text: string, max = MAX_PIECE_CHARS): string[] {
  const pieces: string[] = [];
  let rest = text.trim();
  while ([...rest].length > max) {
    const chars = [...rest];
    let cut = -1;
    for (let i = max - 1; i >= max / 2; i--) {
      if (/[。！？!?；;，,、\s]/.test(chars[i] as string)) {
        cut = i + 1;
        break;
      }
    }
    if (cut < 0) cut = max;
    pieces.push(chars.slice(0, cut).join('').trim());
    rest = chars.slice(cut).join('').trim();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));

/** Volume 80 (the assistant default) is the vendor's 1.0; the doc's range is 0.1-3. */
export const volumeRatio = (volume: number) => Math.round(clamp(volume / 80, 0.1, 3) * 100) / 100;

function toSamples(audio: Buffer): Int16Array {
  const even = audio.length - (audio.length % 2);
  const out = new Int16Array(even / 2);
  for (let i = 0; i < out.length; i++) out[i] = audio.readInt16LE(i * 2);
  return out;
}

interface TtsAnswer {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

export function createVolcengineSynthesizer(options: VolcengineSynthesizerOptions): StreamingSynthesizer {
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? SYNTHESIS_TIMEOUT_MS;
  const endpoint = `${(options.baseUrl || VOLCENGINE_BASE_URL).replace(/\/+$/, '')}/api/v1/tts`;

  async function speak(
    text: string,
    voice: SynthesisVoice,
    rate: number,
    signal: AbortSignal | undefined,
  ): Promise<Int16Array | null> {
    const deadline = clockDeadline(clock, timeoutMs, signal);
    try {
      let res: Response;
      let raw: string;
      try {
        res = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer;${options.token}` },
          body: JSON.stringify({
            app: { appid: options.appId, token: 'access_token', cluster: options.cluster },
            user: { uid: 'callpilot' },
            audio: {
              voice_type: voice.voiceId,
              encoding: 'pcm',
              rate,
              speed_ratio: clamp(voice.speed, 0.5, 2),
              volume_ratio: volumeRatio(voice.volume),
            },
            request: { reqid: randomUUID(), text, text_type: 'plain', operation: 'query' },
          }),
          signal: deadline.signal,
        });
        raw = await res.text();
      } catch {
        if (signal?.aborted) return null;
        if (deadline.timedOut()) throw providerTimeout(timeoutMs, SYNTHESIS_SERVICE);
        throw fail('network', `无法连接${LABEL}，或连接中途断开，请检查${PROFILE}中的接口地址与网络`);
      }
      let answer: TtsAnswer;
      try {
        answer = JSON.parse(raw) as TtsAnswer;
      } catch {
        if (res.ok) throw fail('bad_request', `${LABEL}的应答格式不正确，请检查${PROFILE}中的接口地址`);
        answer = {};
      }
      const code = Number(answer.code);
      const message = typeof answer.message === 'string' ? answer.message : '';
      if (!res.ok || code !== 3000) {
        throw volcengineSynthesisError(res.status, Number.isFinite(code) ? code : 0, message, options.token);
      }
      if (typeof answer.data !== 'string') {
        throw fail('bad_request', `${LABEL}的应答中没有音频，请检查${PROFILE}中的接口地址`);
      }
      return toSamples(Buffer.from(answer.data, 'base64'));
    } finally {
      deadline.dispose();
    }
  }

  return {
    async *stream(text: string, voice: SynthesisVoice, synthesis: SynthesisOptions) {
      if (!options.appId || !options.token) {
        throw fail('auth', `${PROFILE}缺少火山引擎的 APP ID 或 Access Token`);
      }
      for (const piece of splitForVolcengine(text)) {
        if (synthesis.signal?.aborted) return;
        const samples = await speak(piece, voice, synthesis.sampleRate, synthesis.signal);
        if (!samples) return;
        if (samples.length) yield samples;
      }
    },
  };
}
