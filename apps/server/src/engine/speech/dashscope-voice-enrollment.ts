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
 * DashScope (阿里云百炼) CosyVoice voice enrolment, "CosyVoice声音复刻API"
 * (help.aliyun.com/zh/model-studio/cosyvoice-clone-api): one endpoint,
 * `POST {base}/api/v1/services/audio/tts/customization` with `Authorization: Bearer <API Key>` and
 * `{model: 'voice-enrollment', input: {action, ...}}`; actions create_voice {target_model, prefix,
 * url} → output.voice_id, query_voice {voice_id} → output.status, list_voice {prefix?, page_index,
 * page_size} → output.voice_list, delete_voice {voice_id}. The vendor downloads the sample from
 * `url` itself, so it must be publicly reachable. Statuses: DEPLOYING (under review), OK (usable),
 * UNDEPLOYED (refused). Errors are DashScope's usual `{code, message, request_id}` with an HTTP
 * status. Checked against the official SDKs: dashscope/dashscope-sdk-python
 * dashscope/audio/tts_v2/enrollment.py (c0d7a0b) and dashscope/dashscope-sdk-java
 * audio/ttsv2/enrollment/VoiceEnrollmentParam.java, Voice.java (7be4b73).
 */

export const DASHSCOPE_HTTP_BASE = 'https://dashscope.aliyuncs.com/api/v1';
const VENDOR = '阿里云百炼声音复刻服务';

/**
 * The HTTP API base beside a CosyVoice websocket address: the synthesis profile stores
 * `wss://dashscope.aliyuncs.com/api-ws/v1/inference`, enrolment lives at
 * `https://dashscope.aliyuncs.com/api/v1`. A local stand-in (`ws://127.0.0.1:port/...`) maps the
 * same way, over plain http.
 */
export function dashScopeHttpBase(websocketUrl: string): string {
  try {
    const url = new URL(websocketUrl);
    const scheme = url.protocol === 'ws:' || url.protocol === 'http:' ? 'http:' : 'https:';
    const prefix = url.pathname.split('/api-ws/')[0]?.replace(/\/+$/, '') ?? '';
    return `${scheme}//${url.host}${prefix}/api/v1`;
  } catch {
    return DASHSCOPE_HTTP_BASE;
  }
}

/** Prefixes may hold only lowercase letters and digits, at most 10 (the SDKs' rule). */
export const DASHSCOPE_PREFIX = /^[a-z0-9]{1,10}$/;

export interface DashScopeEnrollmentOptions {
  apiKey: string;
  /** `https://dashscope.aliyuncs.com/api/v1` (default) or a stand-in's. */
  baseUrl?: string;
  clock?: Clock;
  timeoutMs?: number;
}

export interface DashScopeVoice {
  voiceId: string;
  status: string;
}

interface DashScopeAnswer {
  code?: unknown;
  message?: unknown;
  output?: {
    voice_id?: unknown;
    status?: unknown;
    voice_list?: { voice_id?: unknown; status?: unknown }[];
  };
}

const { profile: PROFILE } = VOICE_CLONE_SERVICE;

/** DashScope's error code (or the HTTP status) as the console shows it, never with the key. */
export function dashScopeError(status: number, code: string, message: string, apiKey: string) {
  const detail = message ? `：${redactVendorText(message, [apiKey])}` : '';
  const tag = code || `HTTP ${status}`;
  if (code === 'InvalidApiKey' || status === 401) {
    return cloneFailure('auth', `${VENDOR}拒绝了 API Key（${tag}），请检查${PROFILE}中的 API Key`, status);
  }
  if (code.startsWith('AccessDenied') || status === 403) {
    return cloneFailure(
      'auth',
      `${VENDOR}拒绝访问（${tag}）：请确认该 API Key 所属账号已开通 CosyVoice 声音复刻，或检查${PROFILE}`,
      status,
    );
  }
  if (code === 'Arrearage') {
    return cloneFailure('rate_limit', `阿里云百炼账户已欠费（${tag}），请充值后再试`, status);
  }
  if (code.startsWith('Throttling') || status === 429) {
    return cloneFailure('rate_limit', `${VENDOR}请求过于频繁或额度不足（${tag}），请稍后再试`, status);
  }
  if (status === 404) {
    return cloneFailure(
      'not_found',
      `${VENDOR}找不到该接口（${tag}），请检查${PROFILE}中的服务地址${detail}`,
      status,
    );
  }
  if (status >= 500) return cloneFailure('upstream', `${VENDOR}暂时不可用（${tag}），请稍后再试`, status);
  return cloneFailure('bad_request', `${VENDOR}拒绝了请求（${tag}）${detail}`, status);
}

/** DEPLOYING → training, OK → ready, UNDEPLOYED → failed; anything new is still under review. */
export function dashScopeCloneStatus(status: string): VendorCloneStatus {
  if (status === 'OK') return { state: 'ready', reason: '', vendorStatus: status };
  if (status === 'UNDEPLOYED') {
    return {
      state: 'failed',
      reason: '阿里云百炼未通过该音色的审核（UNDEPLOYED），请换一段清晰的单人朗读录音重新复刻',
      vendorStatus: status,
    };
  }
  return { state: 'training', reason: '', vendorStatus: status };
}

/** The enrolment calls, each one request; failures are ProviderErrors that never carry the key. */
export function createDashScopeVoiceEnrollment(options: DashScopeEnrollmentOptions) {
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? VOICE_CLONE_TIMEOUT_MS;
  const endpoint = `${(options.baseUrl ?? DASHSCOPE_HTTP_BASE).replace(/\/+$/, '')}/services/audio/tts/customization`;

  async function call(input: Record<string, unknown>, signal?: AbortSignal): Promise<DashScopeAnswer> {
    if (!options.apiKey) {
      throw cloneFailure('auth', `${PROFILE}缺少阿里云百炼的 API Key，请先填写后再复刻声音`);
    }
    const { status, body } = await postJson(
      endpoint,
      { headers: { authorization: `Bearer ${options.apiKey}` }, body: { model: 'voice-enrollment', input } },
      { clock, timeoutMs, signal, vendor: VENDOR },
    );
    const answer = (body ?? {}) as DashScopeAnswer;
    if (status !== 200) {
      throw dashScopeError(
        status,
        typeof answer.code === 'string' ? answer.code : '',
        typeof answer.message === 'string' ? answer.message : '',
        options.apiKey,
      );
    }
    if (!body) {
      throw cloneFailure('bad_request', `${VENDOR}的应答格式不正确，请检查${PROFILE}中的服务地址`);
    }
    return answer;
  }

  return {
    /** Enrols the sample at `url` (fetched by DashScope) for `targetModel`; answers the voice id. */
    async createVoice(
      input: { targetModel: string; prefix: string; url: string },
      signal?: AbortSignal,
    ): Promise<string> {
      if (!DASHSCOPE_PREFIX.test(input.prefix)) {
        throw cloneFailure('bad_request', '声音复刻的音色前缀只能包含小写字母和数字，且不超过 10 个字符');
      }
      const answer = await call(
        { action: 'create_voice', target_model: input.targetModel, prefix: input.prefix, url: input.url },
        signal,
      );
      const voiceId = answer.output?.voice_id;
      if (typeof voiceId !== 'string' || !voiceId) {
        throw cloneFailure('bad_request', `${VENDOR}没有返回音色 ID，请稍后重试`);
      }
      return voiceId;
    },

    async queryVoice(voiceId: string, signal?: AbortSignal): Promise<VendorCloneStatus> {
      const answer = await call({ action: 'query_voice', voice_id: voiceId }, signal);
      const status = answer.output?.status;
      return dashScopeCloneStatus(typeof status === 'string' ? status : '');
    },

    async listVoices(
      input: { prefix?: string; pageIndex?: number; pageSize?: number } = {},
      signal?: AbortSignal,
    ): Promise<DashScopeVoice[]> {
      const answer = await call(
        {
          action: 'list_voice',
          ...(input.prefix ? { prefix: input.prefix } : {}),
          page_index: input.pageIndex ?? 0,
          page_size: input.pageSize ?? 10,
        },
        signal,
      );
      return (answer.output?.voice_list ?? []).map((voice) => ({
        voiceId: String(voice.voice_id ?? ''),
        status: String(voice.status ?? ''),
      }));
    },

    /** Frees the vendor's slot (an account holds at most 1000 clones). */
    async deleteVoice(voiceId: string, signal?: AbortSignal): Promise<void> {
      await call({ action: 'delete_voice', voice_id: voiceId }, signal);
    },
  };
}

export type DashScopeVoiceEnrollment = ReturnType<typeof createDashScopeVoiceEnrollment>;
