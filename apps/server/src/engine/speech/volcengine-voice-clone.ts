import { type Clock, systemClock } from '../clock';
import {
  cloneFailure,
  postJson,
  redactVendorText,
  type VendorCloneStatus,
  VOICE_CLONE_SERVICE,
  VOICE_CLONE_TIMEOUT_MS,
} from './voice-clone';

/*
 * Volcengine (火山引擎豆包语音) 声音复刻, "声音复刻API" (volcengine.com/docs/6561/1305191, the 2.0
 * page that extends 6561/1167808): `POST https://openspeech.bytedance.com/api/v1/mega_tts/audio/upload`
 * with headers `Authorization: Bearer;<Access Token>` (a semicolon, not a space) and
 * `Resource-Id: volc.megatts.voiceclone`, body {appid, speaker_id, audios: [{audio_bytes (base64),
 * audio_format}], source: 2, language (0 中文), model_type (1: 2.0 effect, spoken through the
 * volcano_icl cluster)}; answer {BaseResp: {StatusCode (0 ok), StatusMessage}, speaker_id}. Status:
 * `POST /api/v1/mega_tts/status` {appid, speaker_id} → status 0 NotFound, 1 Training, 2 Success,
 * 3 Failed, 4 Active. The speaker_id (S_xxx) is a slot bought in Volcengine's console; each slot
 * takes a limited number of uploads (1123) and is never deleted through the API. Refused gateway
 * credentials come back as HTTP 401/403 before the service sees the body ("load grant: requested
 * grant not found").
 */

export const VOLCENGINE_BASE_URL = 'https://openspeech.bytedance.com';
export const VOLCENGINE_CLONE_RESOURCE = 'volc.megatts.voiceclone';
const VENDOR = '火山引擎声音复刻服务';
const { profile: PROFILE } = VOICE_CLONE_SERVICE;

/** The documented upload and training failures, as a user fixes them. */
const UPLOAD_ERRORS: Record<number, string> = {
  1001: '请求参数有误',
  1101: '音频上传失败，请重试',
  1102: '无法识别录音中的文字，请换一段吐字清晰的朗读录音',
  1103: '声纹检测失败，请换一段录音',
  1104: '声纹与公众人物过于相似，无法复刻',
  1105: '无法读取音频数据，请确认文件是完整的 WAV',
  1106: '该音色 ID 已被占用',
  1107: '火山引擎控制台中没有这个音色 ID，请核对音色 ID（S_ 开头）',
  1108: '音频转码失败，请确认文件是完整的 WAV',
  1109: '录音与朗读文本差异过大',
  1111: '录音中没有检测到说话声',
  1112: '录音噪声太大，请在安静的环境重新录制',
  1113: '降噪处理失败，请在安静的环境重新录制',
  1114: '录音质量太低，请在安静的环境重新录制',
  1122: '录音中没有检测到人声',
  1123: '该音色 ID 的训练次数已用完，请在火山引擎控制台购买新的音色 ID',
};

/** A failure before or instead of an answer from the clone service: the gateway's verdict. */
export function volcengineGatewayError(status: number, message: string, secrets: readonly string[]) {
  const detail = message ? `：${redactVendorText(message, secrets)}` : '';
  if (status === 401 || status === 403 || /grant|authenticate|access denied/i.test(message)) {
    return cloneFailure(
      'auth',
      `${VENDOR}拒绝了 Access Token（HTTP ${status}），请检查${PROFILE}中的 APP ID 与 Access Token，并确认已开通声音复刻`,
      status,
    );
  }
  if (status === 429)
    return cloneFailure('rate_limit', `${VENDOR}请求过于频繁（HTTP 429），请稍后再试`, status);
  if (status === 404) {
    return cloneFailure(
      'not_found',
      `${VENDOR}找不到该接口（HTTP 404），请检查${PROFILE}中的接口地址`,
      status,
    );
  }
  if (status >= 500)
    return cloneFailure('upstream', `${VENDOR}暂时不可用（HTTP ${status}），请稍后再试`, status);
  return cloneFailure('bad_request', `${VENDOR}拒绝了请求（HTTP ${status}）${detail}`, status);
}

/** StatusCode ≠ 0 in BaseResp. */
export function volcengineCloneError(code: number, message: string, secrets: readonly string[]) {
  const known = UPLOAD_ERRORS[code];
  const detail = message ? `（${redactVendorText(message, secrets)}）` : '';
  return cloneFailure('bad_request', `${VENDOR}：${known ?? '复刻失败'}（${code}）${known ? '' : detail}`);
}

export function volcengineCloneStatus(status: number): VendorCloneStatus {
  const vendorStatus = String(status);
  if (status === 2 || status === 4) return { state: 'ready', reason: '', vendorStatus };
  if (status === 1) return { state: 'training', reason: '', vendorStatus };
  if (status === 3) {
    return {
      state: 'failed',
      reason: '火山引擎训练该音色失败，请换一段清晰的单人朗读录音重新复刻',
      vendorStatus,
    };
  }
  return {
    state: 'failed',
    reason: '火山引擎找不到该音色（状态 NotFound），请确认音色 ID 属于该 APP ID',
    vendorStatus,
  };
}

export interface VolcengineCloneOptions {
  appId: string;
  /** The console's Access Token; sent only in the Authorization header. */
  token: string;
  /** `https://openspeech.bytedance.com` (default) or a stand-in's origin. */
  baseUrl?: string;
  clock?: Clock;
  timeoutMs?: number;
}

interface MegaTtsAnswer {
  BaseResp?: { StatusCode?: unknown; StatusMessage?: unknown };
  status?: unknown;
  message?: unknown;
}

export function createVolcengineVoiceClone(options: VolcengineCloneOptions) {
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? VOICE_CLONE_TIMEOUT_MS;
  const base = (options.baseUrl || VOLCENGINE_BASE_URL).replace(/\/+$/, '');
  const secrets = [options.token];

  async function call(path: string, body: Record<string, unknown>, signal?: AbortSignal) {
    if (!options.appId || !options.token) {
      throw cloneFailure('auth', `${PROFILE}缺少火山引擎的 APP ID 或 Access Token，请先填写后再复刻声音`);
    }
    const answer = await postJson(
      `${base}${path}`,
      {
        headers: { authorization: `Bearer;${options.token}`, 'resource-id': VOLCENGINE_CLONE_RESOURCE },
        body: { appid: options.appId, ...body },
      },
      { clock, timeoutMs, signal, vendor: VENDOR },
    );
    const parsed = (answer.body ?? {}) as MegaTtsAnswer;
    if (answer.status !== 200) {
      const message = typeof parsed.message === 'string' ? parsed.message : '';
      throw volcengineGatewayError(answer.status, message, secrets);
    }
    const code = Number(parsed.BaseResp?.StatusCode);
    if (!parsed.BaseResp || !Number.isFinite(code)) {
      throw cloneFailure('bad_request', `${VENDOR}的应答格式不正确，请检查${PROFILE}中的接口地址`);
    }
    if (code !== 0) {
      const message = typeof parsed.BaseResp.StatusMessage === 'string' ? parsed.BaseResp.StatusMessage : '';
      throw volcengineCloneError(code, message, secrets);
    }
    return parsed;
  }

  return {
    /** Uploads the sample into the bought slot `speakerId` and starts training (2.0 effect). */
    async upload(
      input: { speakerId: string; audio: Buffer; format: 'wav' | 'mp3'; language?: number },
      signal?: AbortSignal,
    ): Promise<void> {
      await call(
        '/api/v1/mega_tts/audio/upload',
        {
          speaker_id: input.speakerId,
          audios: [{ audio_bytes: input.audio.toString('base64'), audio_format: input.format }],
          source: 2,
          language: input.language ?? 0,
          model_type: 1,
        },
        signal,
      );
    },

    async status(speakerId: string, signal?: AbortSignal): Promise<VendorCloneStatus> {
      const answer = await call('/api/v1/mega_tts/status', { speaker_id: speakerId }, signal);
      return volcengineCloneStatus(Number(answer.status));
    },
  };
}

export type VolcengineVoiceClone = ReturnType<typeof createVolcengineVoiceClone>;
