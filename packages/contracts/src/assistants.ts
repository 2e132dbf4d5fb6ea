import { z } from 'zod';
import { entityId, optionalText, paged, pageQuery, requiredText } from './common';
import { knowledgeVerdict } from './knowledge';

/** Intent grades of a call (A 有明确意向 … D 明确拒绝); unanswered calls have none. */
export const intentGrade = z.enum(['A', 'B', 'C', 'D']);
export type IntentGrade = z.infer<typeof intentGrade>;
export const INTENT_GRADE_LABELS: Record<IntentGrade, string> = {
  A: '有明确意向',
  B: '可能有意向',
  C: '无明确意向',
  D: '明确拒绝',
};

export const assistantUse = z.enum(['outbound', 'inbound', 'both'], {
  error: '用途须为呼出、呼入或呼入呼出',
});
export type AssistantUse = z.infer<typeof assistantUse>;
export const ASSISTANT_USE_LABELS: Record<AssistantUse, string> = {
  outbound: '呼出',
  inbound: '呼入',
  both: '呼入呼出',
};

export const assistantStatus = z.enum(['enabled', 'disabled'], { error: '状态须为启用或停用' });
export type AssistantStatus = z.infer<typeof assistantStatus>;

/** `{{客户姓名}}` in the prompt and the opening line: letters, digits, _ and CJK, no braces or spaces. */
export const VARIABLE_NAME_PATTERN = /^[\p{L}\p{N}_]{1,20}$/u;
export const VARIABLE_REFERENCE_PATTERN = /\{\{\s*([\p{L}\p{N}_]{1,20})\s*\}\}/gu;

export const assistantVariable = z.object({
  name: z
    .string({ error: '请输入变量名' })
    .trim()
    .regex(VARIABLE_NAME_PATTERN, { error: '变量名为 1-20 个汉字、字母、数字或下划线' }),
  /** Shown in the prompt editor's preview and the test chat; never used on a real call. */
  sample: optionalText('示例值', 100).default(''),
  required: z.boolean({ error: '是否必填须为布尔值' }).default(false),
});
export type AssistantVariable = z.infer<typeof assistantVariable>;

/**
 * Who speaks a voice: 'espeak', the offline synthesiser shipped with the server (Mandarin with no
 * download, the default), or the id of one of the project's synthesis profiles (语音配置 › 语音合成).
 * The server checks that a profile id belongs to the project.
 */
export const voiceProvider = requiredText('音色提供方', 64);
export const assistantVoice = z.object({
  provider: voiceProvider.default('espeak'),
  voiceId: requiredText('音色', 64).default('cmn'),
  speed: z
    .number({ error: '语速须为数字' })
    .min(0.5, { error: '语速不能低于 0.5' })
    .max(2, { error: '语速不能超过 2' })
    .default(1),
  volume: z
    .number({ error: '音量须为数字' })
    .int({ error: '音量须为整数' })
    .min(0, { error: '音量不能低于 0' })
    .max(100, { error: '音量不能超过 100' })
    .default(80),
});
export type AssistantVoice = z.infer<typeof assistantVoice>;

export const assistantBrain = z.object({
  /** A project LLM provider profile; null runs the offline script brain (离线脚本模式). */
  providerId: entityId('模型配置').nullable().default(null),
  /** Empty: the provider profile's default model. */
  model: optionalText('模型', 100).default(''),
  temperature: z
    .number({ error: '温度须为数字' })
    .min(0, { error: '温度不能低于 0' })
    .max(2, { error: '温度不能超过 2' })
    .default(0.7),
  maxTokens: z
    .number({ error: '最大输出长度须为数字' })
    .int({ error: '最大输出长度须为整数' })
    .min(16, { error: '最大输出长度不能低于 16' })
    .max(4096, { error: '最大输出长度不能超过 4096' })
    .default(300),
});
export type AssistantBrain = z.infer<typeof assistantBrain>;

export const assistantHearing = z.object({
  /**
   * A project speech-recognition profile (语音识别配置). null: on a real line the assistant
   * understands key presses only; simulated calls need none (the simulator speaks text).
   */
  providerId: entityId('语音识别配置').nullable().default(null),
  /**
   * Words the recogniser should expect (product names, brand, place names): each vendor takes
   * them its own way (FunASR hotwords, Tencent hotword_list, an Aliyun vocabulary).
   */
  hotwords: z
    .array(requiredText('热词', 20), { error: '热词须为文本列表' })
    .max(50, { error: '热词最多 50 个' })
    .default([]),
});
export type AssistantHearing = z.infer<typeof assistantHearing>;

export const assistantKnowledge = z.object({
  baseIds: z.array(entityId('知识库')).max(5, { error: '最多关联 5 个知识库' }).default([]),
  topK: z
    .number({ error: '召回条数须为数字' })
    .int()
    .min(1, { error: '召回条数至少为 1' })
    .max(10, { error: '召回条数不能超过 10' })
    .default(3),
  scoreThreshold: z
    .number({ error: '置信度阈值须为数字' })
    .min(0, { error: '置信度阈值不能低于 0' })
    .max(1, { error: '置信度阈值不能超过 1' })
    .default(0.3),
  /**
   * With a model profile (大模型模式): the caller's words are rewritten and the top candidates
   * re-ranked by the assistant's model before the answer is chosen; adds the model's latency.
   */
  llmAssist: z.boolean({ error: '大模型改写与重排须为布尔值' }).default(false),
});
export type AssistantKnowledge = z.infer<typeof assistantKnowledge>;

export const transferWhen = z.enum(['never', 'on_request', 'on_intent_a'], { error: '转人工时机不支持' });
export const voicemailAction = z.enum(['hangup', 'leave_message'], { error: '语音信箱处理方式不支持' });

export const assistantConversation = z.object({
  silenceTimeoutSec: z
    .number()
    .int()
    .min(1, { error: '静音超时至少 1 秒' })
    .max(30, { error: '静音超时不能超过 30 秒' })
    .default(6),
  silenceReprompt: optionalText('静音提示语', 200).default('您好，请问您还在听吗？'),
  maxSilenceReprompts: z.number().int().min(0).max(5, { error: '静音提示次数不能超过 5' }).default(2),
  maxCallSeconds: z
    .number()
    .int()
    .min(30, { error: '最长通话时长至少 30 秒' })
    .max(3600, { error: '最长通话时长不能超过 3600 秒' })
    .default(300),
  /** The script brain ends the call after this many callee turns. */
  maxTurns: z
    .number()
    .int()
    .min(1, { error: '最多对话轮数至少为 1' })
    .max(50, { error: '最多对话轮数不能超过 50' })
    .default(8),
  allowInterrupt: z.boolean().default(true),
  endCallPhrases: z
    .array(requiredText('结束语关键词', 20))
    .max(20, { error: '结束语关键词最多 20 个' })
    .default(['再见', '拜拜']),
  closingLine: optionalText('结束语', 200).default('感谢您的接听，祝您生活愉快，再见！'),
  fallbackReply: optionalText('兜底回复', 200).default(
    '抱歉，这个问题我需要确认一下，稍后会有专人联系您。请问还有其他问题吗？',
  ),
  optOutReply: optionalText('拒绝后回复', 200).default('好的，很抱歉打扰您了，以后不会再给您致电，再见！'),
  transferNumber: z
    .string()
    .trim()
    .regex(/^$|^[0-9+\-\s]{3,20}$/, { error: '转接号码格式不正确' })
    .default(''),
  transferWhen: transferWhen.default('on_request'),
  transferLine: optionalText('转人工提示语', 200).default('好的，正在为您转接人工客服，请稍候。'),
  voicemailAction: voicemailAction.default('hangup'),
  voicemailMessage: optionalText('语音信箱留言', 300).default(''),
});
export type AssistantConversation = z.infer<typeof assistantConversation>;

export const intentRule = z.object({
  description: optionalText('意向说明', 300).default(''),
  /** Any of these in the callee's words suggests this grade (rules-based analysis). */
  keywords: z
    .array(requiredText('意向关键词', 20))
    .max(30, { error: '每个等级最多 30 个关键词' })
    .default([]),
});
export const intentRules = z.object({
  A: intentRule.default({ description: '', keywords: [] }),
  B: intentRule.default({ description: '', keywords: [] }),
  C: intentRule.default({ description: '', keywords: [] }),
  D: intentRule.default({ description: '', keywords: [] }),
});
export type IntentRules = z.infer<typeof intentRules>;

/** Everything a call runs on. Publishing freezes one of these as a version. */
export const assistantConfig = z
  .object({
    openingLine: optionalText('开场白', 500).default(''),
    systemPrompt: optionalText('提示词', 8000).default(''),
    variables: z.array(assistantVariable).max(20, { error: '变量最多 20 个' }).default([]),
    voice: assistantVoice.default({ provider: 'espeak', voiceId: 'cmn', speed: 1, volume: 80 }),
    brain: assistantBrain.default({ providerId: null, model: '', temperature: 0.7, maxTokens: 300 }),
    hearing: assistantHearing.default({ providerId: null, hotwords: [] }),
    knowledge: assistantKnowledge.default({ baseIds: [], topK: 3, scoreThreshold: 0.3, llmAssist: false }),
    conversation: assistantConversation.default(() => assistantConversation.parse({})),
    intentRules: intentRules.default(() => intentRules.parse({})),
  })
  .superRefine((config, ctx) => {
    const names = config.variables.map((variable) => variable.name);
    const duplicate = names.find((name, index) => names.indexOf(name) !== index);
    if (duplicate) ctx.addIssue({ code: 'custom', path: ['variables'], message: `变量名重复：${duplicate}` });
  })
  .meta({ id: 'AssistantConfig' });
export type AssistantConfig = z.infer<typeof assistantConfig>;

export const assistantWriteRequest = z
  .object({
    name: requiredText('小助手名称', 50),
    description: optionalText('描述', 200).default(''),
    use: assistantUse.default('outbound'),
    status: assistantStatus.default('enabled'),
    config: assistantConfig.default(() => assistantConfig.parse({})),
  })
  .meta({ id: 'AssistantWriteRequest' });
export type AssistantWriteRequest = z.input<typeof assistantWriteRequest>;

export const assistantCreateRequest = assistantWriteRequest
  .extend({
    /** Start from a built-in template; the request's own fields override it. */
    templateKey: z.string().max(64).optional(),
  })
  .meta({ id: 'AssistantCreateRequest' });

export const assistantSummary = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    use: assistantUse,
    status: assistantStatus,
    /** null until first published; calls and tasks can only use a published version. */
    publishedVersion: z.number().int().nullable(),
    /** The draft differs from the latest published version. */
    hasUnpublishedChanges: z.boolean(),
    brainMode: z.enum(['llm', 'script']),
    knowledgeBaseCount: z.number().int(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'AssistantSummary' });
export type AssistantSummary = z.infer<typeof assistantSummary>;

export const assistantDetail = assistantSummary
  .extend({ config: assistantConfig, templateKey: z.string().nullable() })
  .meta({ id: 'AssistantDetail' });
export type AssistantDetail = z.infer<typeof assistantDetail>;

export const assistantListQuery = pageQuery.extend({
  keyword: optionalText('关键词', 50).optional(),
  use: assistantUse.optional(),
  status: assistantStatus.optional(),
});
export const assistantList = paged(assistantSummary).meta({ id: 'AssistantList' });

export const assistantIdParams = z.object({
  projectId: entityId('项目 ID'),
  assistantId: entityId('小助手 ID'),
});
export const assistantVersionParams = assistantIdParams.extend({
  version: z.coerce
    .number({ error: '版本号须为数字' })
    .int({ error: '版本号须为整数' })
    .min(1, { error: '版本号至少为 1' }),
});

export const assistantPublishRequest = z.object({ note: optionalText('版本说明', 200).default('') });

export const assistantVersion = z
  .object({
    version: z.number().int(),
    note: z.string(),
    name: z.string(),
    use: assistantUse,
    config: assistantConfig,
    publishedAt: z.iso.datetime(),
    publishedBy: z.string(),
    /** Set when published by approving a review: the member who submitted it. */
    submittedBy: z.string().nullable(),
  })
  .meta({ id: 'AssistantVersion' });
export type AssistantVersion = z.infer<typeof assistantVersion>;

export const assistantTemplate = z
  .object({
    key: z.string(),
    name: z.string(),
    category: z.string(),
    description: z.string(),
    use: assistantUse,
    config: assistantConfig,
  })
  .meta({ id: 'AssistantTemplate' });
export type AssistantTemplate = z.infer<typeof assistantTemplate>;

/** Fills `{{变量}}` from `values`; a missing value keeps the reference visible so it is noticed. */
export function fillVariables(text: string, values: Record<string, string>): string {
  return text.replace(VARIABLE_REFERENCE_PATTERN, (whole, name: string) => values[name] ?? whole);
}

/** The variable names a text refers to, in order of first use. */
export function referencedVariables(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(VARIABLE_REFERENCE_PATTERN)) {
    const name = match[1];
    if (name && !names.includes(name)) names.push(name);
  }
  return names;
}

// ---- Test chat ----

export const chatMessage = z.object({
  role: z.enum(['user', 'assistant'], { error: '消息角色须为 user 或 assistant' }),
  content: z.string({ error: '消息内容须为文本' }).max(2000, { error: '单条消息不能超过 2000 个字符' }),
});
export type ChatMessage = z.infer<typeof chatMessage>;

export const testChatRequest = z
  .object({
    /** The conversation so far; empty asks for the opening line. The last message is the callee's. */
    messages: z.array(chatMessage).max(100, { error: '对话不能超过 100 条' }).default([]),
    variables: z.record(z.string(), z.string().max(200)).default({}),
    /** Test the published version instead of the draft. */
    version: z.number().int().min(1).optional(),
  })
  .meta({ id: 'TestChatRequest' });
export type TestChatRequest = z.input<typeof testChatRequest>;

export const usedSegment = z.object({
  id: z.string(),
  knowledgeBaseId: z.string(),
  documentName: z.string(),
  content: z.string(),
  /** Calibrated confidence (0-1), comparable with the assistant's threshold. */
  score: z.number(),
  /**
   * false: not said to the caller. A refused question keeps its nearest candidate on the turn so
   * the knowledge report can show what came closest; absent (older turns) or true: answered from it.
   */
  used: z.boolean().optional(),
});
export type UsedSegment = z.infer<typeof usedSegment>;

export const brainAction = z.enum(['end_call', 'transfer', 'send_sms', 'opt_out']);
export type BrainAction = z.infer<typeof brainAction>;

/**
 * The test chat answers as server-sent events (`data: <json>` lines), in this order:
 * segments (when knowledge was searched), delta* (the reply as it streams), intent?, action*, done;
 * or error at any point.
 */
export const testChatEvent = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('segments'),
    /** The segments the reply may use: empty when the knowledge refused to answer. */
    segments: z.array(usedSegment),
    /** How the knowledge judged the question, as a call would (absent from older servers). */
    verdict: knowledgeVerdict.optional(),
    confidence: z.number().optional(),
    threshold: z.number().optional(),
  }),
  z.object({ type: z.literal('delta'), text: z.string() }),
  z.object({ type: z.literal('intent'), grade: intentGrade, reason: z.string() }),
  z.object({ type: z.literal('action'), action: brainAction, detail: z.string() }),
  z.object({
    type: z.literal('done'),
    reply: z.string(),
    mode: z.enum(['llm', 'script']),
    /** Milliseconds: knowledge retrieval, brain until the first text, brain in total, whole turn. */
    latency: z.object({
      retrievalMs: z.number(),
      firstTokenMs: z.number(),
      brainMs: z.number(),
      totalMs: z.number(),
    }),
  }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type TestChatEvent = z.infer<typeof testChatEvent>;

export const ttsPreviewRequest = z
  .object({
    text: requiredText('合成文本', 500),
    voice: assistantVoice.default({ provider: 'espeak', voiceId: 'cmn', speed: 1, volume: 80 }),
  })
  .meta({ id: 'TtsPreviewRequest' });

// ---- LLM provider profiles ----

/** The base URL of an OpenAI-compatible endpoint (model or speech recognition profiles). */
export const providerBaseUrl = z
  .url({ error: '接口地址须为 http(s) 网址', protocol: /^https?$/ })
  .max(300, { error: '接口地址不能超过 300 个字符' });

/** A provider profile's API key on write. On update, omit it (or send an empty string) to keep the stored key. */
export const providerApiKey = optionalText('API Key', 300).optional();
/** On update: remove the stored key (an endpoint that needs none, such as a local server). */
export const clearProviderApiKey = z.boolean({ error: '是否清除 API Key 须为布尔值' }).optional();

export const llmProviderWriteRequest = z
  .object({
    name: requiredText('配置名称', 50),
    baseUrl: providerBaseUrl,
    model: requiredText('默认模型', 100),
    /** Write-only. */
    apiKey: providerApiKey,
    /** Optional embeddings model on the same endpoint, for hybrid knowledge retrieval. */
    embeddingModel: optionalText('向量模型', 100).default(''),
    clearApiKey: clearProviderApiKey,
  })
  .meta({ id: 'LlmProviderWriteRequest' });
export type LlmProviderWriteRequest = z.input<typeof llmProviderWriteRequest>;

export const llmProvider = z
  .object({
    id: z.string(),
    name: z.string(),
    baseUrl: z.string(),
    model: z.string(),
    embeddingModel: z.string(),
    /** Only whether a key is stored and its last 4 characters; the key itself never leaves the server. */
    hasApiKey: z.boolean(),
    apiKeyHint: z.string(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'LlmProvider' });
export type LlmProvider = z.infer<typeof llmProvider>;

export const llmProviderIdParams = z.object({
  projectId: entityId('项目 ID'),
  providerId: entityId('模型配置 ID'),
});

export const llmProviderList = paged(llmProvider).meta({ id: 'LlmProviderList' });

/** `POST .../llm-providers/:providerId/test`: one tiny chat completion through the stored profile. */
export const llmProviderTestResult = z
  .object({
    ok: z.boolean(),
    latencyMs: z.number(),
    /** Chinese, shown as is: the model's first words on success, what to check on failure. */
    message: z.string(),
  })
  .meta({ id: 'LlmProviderTestResult' });
export type LlmProviderTestResult = z.infer<typeof llmProviderTestResult>;

// ---- Speech recognition profiles ----

/** How a recognition profile is spoken to: a vendor's streaming protocol, or OpenAI-compatible HTTP. */
export const speechVendor = z.enum(['openai_compatible', 'funasr', 'aliyun_nls', 'tencent'], {
  error: '语音识别服务类型不支持',
});
export type SpeechVendor = z.infer<typeof speechVendor>;
export const SPEECH_VENDOR_LABELS: Record<SpeechVendor, string> = {
  openai_compatible: 'OpenAI 兼容接口（/audio/transcriptions）',
  funasr: 'FunASR（自部署）',
  aliyun_nls: '阿里云实时语音识别',
  tencent: '腾讯云实时语音识别',
};

/** A websocket address (FunASR server, Aliyun gateway); an empty one asks for it by name. */
export const websocketUrl = (label: string) =>
  z
    .url({
      protocol: /^wss?$/,
      error: (issue) =>
        issue.input === undefined || issue.input === ''
          ? `请输入${label}`
          : `${label}须为 ws:// 或 wss:// 开头的地址`,
    })
    .max(300, { error: `${label}不能超过 300 个字符` });

/**
 * What one vendor makes of a profile's generic columns. The write request keeps one shape for
 * every vendor (baseUrl, model, appId, keyId, apiKey); each vendor gives some of them its own
 * meaning and rules, and ignores the others (stored empty). A field whose schema accepts
 * `undefined` may be left empty: the vendor's default (SPEECH_VENDOR_DEFAULTS) is stored.
 * The console validates its form with the same schemas, so it says what the server would.
 */
export interface SpeechVendorRules {
  baseUrl: z.ZodType;
  model?: z.ZodType;
  appId?: z.ZodType;
  keyId?: z.ZodType;
  /**
   * The secret (apiKey) is a signing key the vendor cannot work without: required on create, and
   * on an update that switches to this vendor. Others take it as an optional token or API key.
   */
  secretRequired?: { label: string };
}

export const SPEECH_VENDOR_RULES: Record<SpeechVendor, SpeechVendorRules> = {
  openai_compatible: {
    baseUrl: providerBaseUrl,
    model: requiredText('识别模型', 100),
  },
  funasr: {
    baseUrl: websocketUrl('服务地址'),
    model: z.enum(['2pass', 'online'], { error: '模式须为 2pass 或 online' }).optional(),
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
        error: '服务地址须为域名（如 asr.cloud.tencent.com）或 ws:// 、wss:// 开头的地址',
      })
      .max(300, { error: '服务地址不能超过 300 个字符' })
      .optional(),
    // Phone lines carry 8 kHz audio; a 16k engine would refuse it.
    model: z
      .string()
      .regex(/^8k_[A-Za-z0-9_-]+$/, { error: '识别引擎须为 8k 开头的电话引擎，如 8k_zh' })
      .max(50, { error: '识别引擎不能超过 50 个字符' })
      .optional(),
    appId: requiredText('AppID', 20).regex(/^\d+$/, { error: 'AppID 须为数字' }),
    keyId: requiredText('SecretId', 128),
    secretRequired: { label: 'SecretKey' },
  },
};

/** What an empty field becomes, per vendor (and what the console pre-fills). */
export const SPEECH_VENDOR_DEFAULTS: Record<SpeechVendor, { baseUrl: string; model: string }> = {
  openai_compatible: { baseUrl: '', model: '' },
  funasr: { baseUrl: '', model: '2pass' },
  aliyun_nls: { baseUrl: 'wss://nls-gateway-cn-shanghai.aliyuncs.com/ws/v1', model: '' },
  tencent: { baseUrl: 'asr.cloud.tencent.com', model: '8k_zh' },
};

const SPEECH_VENDOR_FIELDS = ['baseUrl', 'model', 'appId', 'keyId'] as const;

export const speechProviderWriteRequest = z
  .object({
    name: requiredText('配置名称', 50),
    vendor: speechVendor.default('openai_compatible'),
    /** OpenAI-compatible: the API base URL; FunASR: ws(s):// server; Aliyun: gateway; Tencent: host. */
    baseUrl: optionalText('接口地址', 300).default(''),
    /** OpenAI-compatible: the model; FunASR: mode (2pass/online); Tencent: engine; Aliyun: unused. */
    model: optionalText('识别模型', 100).default(''),
    /** Aliyun: Appkey; Tencent: AppID. Not secret. */
    appId: optionalText('应用 ID', 64).default(''),
    /** Aliyun: AccessKey ID; Tencent: SecretId. Not secret: shown to identify the key. */
    keyId: optionalText('密钥 ID', 128).default(''),
    /** Write-only: API key, FunASR access token, AccessKey Secret or SecretKey. */
    apiKey: providerApiKey,
    clearApiKey: clearProviderApiKey,
  })
  .superRefine((input, ctx) => {
    const rules = SPEECH_VENDOR_RULES[input.vendor];
    for (const field of SPEECH_VENDOR_FIELDS) {
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
  .meta({ id: 'SpeechProviderWriteRequest' });
export type SpeechProviderWriteRequest = z.input<typeof speechProviderWriteRequest>;

export const speechProvider = z
  .object({
    id: z.string(),
    name: z.string(),
    vendor: speechVendor,
    baseUrl: z.string(),
    model: z.string(),
    /** Aliyun Appkey, Tencent AppID; '' for vendors without one. */
    appId: z.string(),
    /** Aliyun AccessKey ID, Tencent SecretId: shown, unlike the secret that goes with it. */
    keyId: z.string(),
    /** Only whether a key is stored and its last 4 characters; the key itself never leaves the server. */
    hasApiKey: z.boolean(),
    apiKeyHint: z.string(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'SpeechProvider' });
export type SpeechProvider = z.infer<typeof speechProvider>;

export const speechProviderIdParams = z.object({
  projectId: entityId('项目 ID'),
  speechProviderId: entityId('语音识别配置 ID'),
});

export const speechProviderList = paged(speechProvider).meta({ id: 'SpeechProviderList' });

/** `POST .../speech-providers/:speechProviderId/test`: a short built-in sample transcribed by the profile. */
export const speechProviderTestResult = llmProviderTestResult
  .extend({
    /** What the recogniser heard in the sample; empty when the test failed or it heard nothing. */
    text: z.string(),
  })
  .meta({ id: 'SpeechProviderTestResult' });
export type SpeechProviderTestResult = z.infer<typeof speechProviderTestResult>;

// ---- Do-not-call list ----

export const doNotCallEntry = z
  .object({
    phone: z.string(),
    reason: z.string(),
    source: z.enum(['opt_out', 'manual', 'import']),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'DoNotCallEntry' });
export type DoNotCallEntry = z.infer<typeof doNotCallEntry>;

/**
 * A mainland China number in the form the do-not-call list stores: mobile (1xxxxxxxxxx),
 * landline with area code (0xxxxxxxxx[x][x]) or a 400/800 service number; +86, 0086, spaces,
 * dashes and brackets are dropped. null when it is none of these.
 */
export function normalizeMainlandPhone(value: string): string | null {
  let digits = value.replace(/[\s\-()（）]/g, '');
  if (digits.startsWith('+86')) digits = digits.slice(3);
  else if (digits.startsWith('0086')) digits = digits.slice(4);
  else if (/^86(1\d{10}|0\d{9,11})$/.test(digits)) digits = digits.slice(2);
  if (/^1[3-9]\d{9}$/.test(digits)) return digits;
  if (/^0[1-9]\d{8,10}$/.test(digits)) return digits;
  if (/^[48]00\d{7}$/.test(digits)) return digits;
  return null;
}

export const doNotCallPhone = z
  .string({ error: '请输入号码' })
  .trim()
  .min(1, { error: '请输入号码', abort: true })
  .max(30, { error: '号码格式不正确', abort: true })
  .refine((value) => normalizeMainlandPhone(value) !== null, { error: '号码格式不正确' });

export const doNotCallCreateRequest = z
  .object({ phone: doNotCallPhone, reason: optionalText('原因', 200).default('') })
  .meta({ id: 'DoNotCallCreateRequest' });
export type DoNotCallCreateRequest = z.input<typeof doNotCallCreateRequest>;

export const doNotCallListQuery = pageQuery.extend({
  /** Partial match on the stored (normalised) number. */
  phone: optionalText('号码', 30).optional(),
});
export const doNotCallList = paged(doNotCallEntry).meta({ id: 'DoNotCallList' });
