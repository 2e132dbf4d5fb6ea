import { z } from 'zod';
import {
  clearProviderApiKey,
  llmProviderTestResult,
  providerApiKey,
  providerBaseUrl,
  type SpeechVendorRules,
  websocketUrl,
} from './assistants';
import { entityId, optionalText, paged, requiredText } from './common';

// ---- Speech synthesis profiles (语音配置 › 语音合成) ----

/**
 * How a synthesis profile is spoken to. Volcengine is here for the voices cloned there (its
 * enrolment makes a speaker only its own TTS can speak); CosyVoice speaks DashScope's clones.
 */
export const synthesisVendor = z.enum(
  ['cosyvoice', 'aliyun_nls', 'tencent', 'openai_compatible', 'volcengine'],
  {
    error: '语音合成服务类型不支持',
  },
);
export type SynthesisVendor = z.infer<typeof synthesisVendor>;
export const SYNTHESIS_VENDOR_LABELS: Record<SynthesisVendor, string> = {
  cosyvoice: '阿里云百炼 CosyVoice',
  aliyun_nls: '阿里云智能语音交互（流式语音合成）',
  tencent: '腾讯云实时语音合成',
  openai_compatible: 'OpenAI 兼容接口（/audio/speech）',
  volcengine: '火山引擎语音合成',
};

/** Same shape as the recognition profiles' rules: each vendor gives the generic columns its meaning. */
export const SYNTHESIS_VENDOR_RULES: Record<SynthesisVendor, SpeechVendorRules> = {
  cosyvoice: {
    baseUrl: websocketUrl('服务地址').optional(),
    model: z
      .string()
      .regex(/^cosyvoice-[A-Za-z0-9._-]+$/, { error: '模型须为 cosyvoice 开头，如 cosyvoice-v2' })
      .max(50, { error: '模型不能超过 50 个字符' })
      .optional(),
    secretRequired: { label: 'API Key' },
  },
  aliyun_nls: {
    baseUrl: websocketUrl('网关地址').optional(),
    appId: requiredText('Appkey', 64).regex(/^[A-Za-z0-9]+$/, { error: 'Appkey 只能包含字母和数字' }),
    keyId: requiredText('AccessKey ID', 128),
    secretRequired: { label: 'AccessKey Secret' },
  },
  tencent: {
    baseUrl: z
      .string()
      .regex(/^(?:wss?:\/\/[^\s/?#]+(?:\/[^\s?#]*)?|[A-Za-z0-9.-]+(?::\d{1,5})?)$/, {
        error: '服务地址须为域名（如 tts.cloud.tencent.com）或 ws:// 、wss:// 开头的地址',
      })
      .max(300, { error: '服务地址不能超过 300 个字符' })
      .optional(),
    appId: requiredText('AppID', 20).regex(/^\d+$/, { error: 'AppID 须为数字' }),
    keyId: requiredText('SecretId', 128),
    secretRequired: { label: 'SecretKey' },
  },
  openai_compatible: {
    baseUrl: providerBaseUrl,
    model: requiredText('合成模型', 100),
  },
  volcengine: {
    baseUrl: providerBaseUrl.optional(),
    /** The cluster: volcano_tts for preset voices, volcano_icl for cloned ones. */
    model: z
      .string()
      .regex(/^[a-z0-9_]+$/, { error: '集群须为小写字母、数字或下划线，如 volcano_tts' })
      .max(50, { error: '集群不能超过 50 个字符' })
      .optional(),
    appId: requiredText('APP ID', 64).regex(/^[A-Za-z0-9]+$/, { error: 'APP ID 只能包含字母和数字' }),
    secretRequired: { label: 'Access Token' },
  },
};

export const SYNTHESIS_VENDOR_DEFAULTS: Record<SynthesisVendor, { baseUrl: string; model: string }> = {
  cosyvoice: { baseUrl: 'wss://dashscope.aliyuncs.com/api-ws/v1/inference', model: 'cosyvoice-v2' },
  aliyun_nls: { baseUrl: 'wss://nls-gateway-cn-shanghai.aliyuncs.com/ws/v1', model: '' },
  tencent: { baseUrl: 'tts.cloud.tencent.com', model: '' },
  openai_compatible: { baseUrl: '', model: '' },
  volcengine: { baseUrl: 'https://openspeech.bytedance.com', model: 'volcano_tts' },
};

const SYNTHESIS_VENDOR_FIELDS = ['baseUrl', 'model', 'appId', 'keyId'] as const;

export const synthesisProviderWriteRequest = z
  .object({
    name: requiredText('配置名称', 50),
    vendor: synthesisVendor.default('cosyvoice'),
    baseUrl: optionalText('接口地址', 300).default(''),
    /** CosyVoice / OpenAI-compatible: the model; Volcengine: the cluster; others unused. */
    model: optionalText('合成模型', 100).default(''),
    /** Aliyun Appkey, Tencent AppID, Volcengine APP ID. Not secret. */
    appId: optionalText('应用 ID', 64).default(''),
    /** Aliyun AccessKey ID, Tencent SecretId. Not secret. */
    keyId: optionalText('密钥 ID', 128).default(''),
    /** Write-only: API key, AccessKey Secret, SecretKey or Access Token. */
    apiKey: providerApiKey,
    clearApiKey: clearProviderApiKey,
  })
  .superRefine((input, ctx) => {
    const rules = SYNTHESIS_VENDOR_RULES[input.vendor];
    for (const field of SYNTHESIS_VENDOR_FIELDS) {
      const schema = rules[field];
      if (!schema) continue;
      const value = input[field];
      const checked = schema.safeParse(value === '' ? undefined : value);
      if (!checked.success) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: checked.error.issues[0]?.message ?? '格式不正确',
        });
      }
    }
  })
  .meta({ id: 'SynthesisProviderWriteRequest' });
export type SynthesisProviderWriteRequest = z.input<typeof synthesisProviderWriteRequest>;

export const synthesisProvider = z
  .object({
    id: z.string(),
    name: z.string(),
    vendor: synthesisVendor,
    baseUrl: z.string(),
    model: z.string(),
    appId: z.string(),
    keyId: z.string(),
    hasApiKey: z.boolean(),
    apiKeyHint: z.string(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'SynthesisProvider' });
export type SynthesisProvider = z.infer<typeof synthesisProvider>;

export const synthesisProviderIdParams = z.object({
  projectId: entityId('项目 ID'),
  synthesisProviderId: entityId('语音合成配置 ID'),
});

export const synthesisProviderList = paged(synthesisProvider).meta({ id: 'SynthesisProviderList' });

/** `POST .../synthesis-providers/:id/test`: a sentence spoken by the profile, with its latencies. */
export const synthesisProviderTestResult = llmProviderTestResult
  .extend({
    /** Time to the first audio chunk, the number callers feel; null when the test failed. */
    firstAudioMs: z.number().nullable(),
    /** The sentence as a 16 kHz WAV, base64; '' when the test failed. */
    audioBase64: z.string(),
  })
  .meta({ id: 'SynthesisProviderTestResult' });
export type SynthesisProviderTestResult = z.infer<typeof synthesisProviderTestResult>;

/** `POST .../synthesis-providers/:id/test`: which voice speaks the test sentence (default: the vendor's first). */
export const synthesisProviderTestRequest = z
  .object({
    voiceId: optionalText('音色', 128).default(''),
  })
  .meta({ id: 'SynthesisProviderTestRequest' });
export type SynthesisProviderTestRequest = z.input<typeof synthesisProviderTestRequest>;

// ---- Voices (the assistant editor's picker) ----

/**
 * A voice an assistant can speak with: one of the offline voices (provider 'espeak', no
 * providerName or vendor), or a voice of one of the project's synthesis profiles (provider = its
 * id): a vendor preset or a cloned voice.
 */
export const voiceOption = z.object({
  provider: z.string(),
  voiceId: z.string(),
  name: z.string(),
  language: z.string(),
  /** The synthesis profile's name, the picker's group. */
  providerName: z.string().optional(),
  vendor: synthesisVendor.optional(),
  gender: z.enum(['female', 'male']).optional(),
});
export type VoiceOption = z.infer<typeof voiceOption>;

// ---- Project speech settings (primary and fallback) ----

/** The offline voice is a provider of its own: always there, never fails for lack of a network. */
export const OFFLINE_VOICE_PROVIDER = 'espeak';

export const speechSettings = z
  .object({
    /** The recogniser of assistants that do not pick one; null: key presses only. */
    recognitionPrimaryId: entityId('主识别配置').nullable().default(null),
    /** Takes over when the primary fails or exceeds its timeout within a call. */
    recognitionFallbackId: entityId('备用识别配置').nullable().default(null),
    /**
     * The voice that speaks when an assistant's own voice (its primary) fails or is too slow:
     * a synthesis profile id or 'espeak', and a voice of it.
     */
    synthesisFallback: z
      .object({
        provider: requiredText('备用音色提供方', 64),
        voiceId: requiredText('备用音色', 128),
      })
      .default({ provider: OFFLINE_VOICE_PROVIDER, voiceId: 'cmn+f3' }),
    /** Past this a primary counts as failed for the turn and the fallback is used. */
    recognitionTimeoutMs: z
      .number({ error: '识别超时须为数字' })
      .int({ error: '识别超时须为整数' })
      .min(300, { error: '识别超时不能低于 300 毫秒' })
      .max(10_000, { error: '识别超时不能超过 10000 毫秒' })
      .default(2000),
    synthesisTimeoutMs: z
      .number({ error: '合成超时须为数字' })
      .int({ error: '合成超时须为整数' })
      .min(300, { error: '合成超时不能低于 300 毫秒' })
      .max(10_000, { error: '合成超时不能超过 10000 毫秒' })
      .default(1500),
  })
  .meta({ id: 'SpeechSettings' });
export type SpeechSettings = z.infer<typeof speechSettings>;

// ---- Voice cloning (声音复刻) ----

/** Vendors whose enrolment API clones a voice; their synthesis profile speaks the clone. */
export const cloneVendor = z.enum(['cosyvoice', 'volcengine'], { error: '该语音合成服务不支持声音复刻' });
export type CloneVendor = z.infer<typeof cloneVendor>;

export const voiceCloneStatus = z.enum(['training', 'ready', 'failed']);
export type VoiceCloneStatus = z.infer<typeof voiceCloneStatus>;
export const VOICE_CLONE_STATUS_LABELS: Record<VoiceCloneStatus, string> = {
  training: '复刻中',
  ready: '可用',
  failed: '失败',
};

/** An assistant's voiceId for a cloned voice: our id, never the vendor's (which stays on the server). */
export const CLONED_VOICE_PREFIX = 'clone:';

/** What the sample must be, checked in the browser before upload and again on the server. */
export const VOICE_SAMPLE_RULES = {
  minSeconds: 10,
  maxSeconds: 20,
  minSampleRate: 16000,
  /** Quieter than this (RMS, dBFS) the vendor cannot hear the voice well. */
  minLoudnessDb: -35,
  /** More than this share of samples at full scale: the recording was overdriven. */
  maxClippedRatio: 0.001,
  maxBytes: 10 * 1024 * 1024,
} as const;

export const voiceClone = z
  .object({
    id: z.string(),
    name: z.string(),
    /** The synthesis profile it was enrolled with, and speaks through. */
    providerId: z.string(),
    vendor: cloneVendor,
    status: voiceCloneStatus,
    /** Why the vendor refused it, in Chinese; '' unless failed. */
    failureReason: z.string(),
    sampleDurationMs: z.number().int(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'VoiceClone' });
export type VoiceClone = z.infer<typeof voiceClone>;

export const voiceCloneList = paged(voiceClone).meta({ id: 'VoiceCloneList' });

export const voiceCloneIdParams = z.object({
  projectId: entityId('项目 ID'),
  voiceCloneId: entityId('复刻音色 ID'),
});
