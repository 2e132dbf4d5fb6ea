import { z } from 'zod';
import { optionalText, paged, pageQuery, requiredText } from './common';

/**
 * 开发者选项: API keys for the open API (/opendock/v1) and webhook endpoints. This file holds what
 * both the console and the server need to agree on; the open API's own request and response
 * shapes live in opendock.ts, the webhook event catalogue in webhook-events.ts.
 */

// ---------------------------------------------------------------------------------------------
// API keys
// ---------------------------------------------------------------------------------------------

/** What a key may reach, one entry per resource of the open API. */
export const apiKeyResource = z.enum([
  'calls',
  'tasks',
  'contacts',
  'records',
  'assistants',
  'knowledge',
  'do_not_call',
  'sms',
]);
export type ApiKeyResource = z.infer<typeof apiKeyResource>;

export const API_KEY_RESOURCE_LABELS: Record<ApiKeyResource, string> = {
  calls: '通话（发起单通外呼）',
  tasks: '呼出任务',
  contacts: '任务联系人',
  records: '通话记录与录音',
  assistants: '智能小助手',
  knowledge: '知识库',
  do_not_call: '免打扰名单',
  sms: '短信',
};

/** Resources a key may only read (assistants are edited in the console). */
export const READ_ONLY_API_KEY_RESOURCES: readonly ApiKeyResource[] = ['assistants'];

export const apiKeyAccess = z.enum(['none', 'read', 'write']);
export type ApiKeyAccess = z.infer<typeof apiKeyAccess>;

/** Per resource: none, read, or read-write ('write' includes read). Missing resources are 'none'. */
export const apiKeyScopes = z.partialRecord(apiKeyResource, apiKeyAccess).superRefine((scopes, ctx) => {
  for (const resource of READ_ONLY_API_KEY_RESOURCES) {
    if (scopes[resource] === 'write') {
      ctx.addIssue({
        code: 'custom',
        path: [resource],
        message: `权限 ${API_KEY_RESOURCE_LABELS[resource]} 只能设为只读`,
      });
    }
  }
  if (!Object.values(scopes).some((access) => access && access !== 'none')) {
    ctx.addIssue({ code: 'custom', message: '权限范围：至少选择一项资源的读或读写权限' });
  }
});
export type ApiKeyScopes = z.infer<typeof apiKeyScopes>;

/** Whether `scopes` allow `access` to `resource` ('write' includes 'read'). */
export function scopeAllows(
  scopes: ApiKeyScopes,
  resource: ApiKeyResource,
  access: 'read' | 'write',
): boolean {
  const granted = scopes[resource] ?? 'none';
  return access === 'read' ? granted === 'read' || granted === 'write' : granted === 'write';
}

/** The recognisable start of every key; the rest is 32 bytes of base62. */
export const API_KEY_PREFIX = 'cp_live_';
export const API_KEY_PATTERN = /^cp_live_[0-9A-Za-z]{43}$/;

/** An IPv4/IPv6 address or CIDR block; checked precisely on the server. */
const allowlistEntry = z
  .string({ error: 'IP 白名单：每项须为文本' })
  .trim()
  .min(1, { error: 'IP 白名单：不能有空项' })
  .max(64, { error: 'IP 白名单：每项不能超过 64 个字符' })
  .regex(/^[0-9A-Fa-f:.]+(\/\d{1,3})?$/, {
    error: 'IP 白名单：每项须为 IP 地址或 CIDR 网段，如 203.0.113.7 或 203.0.113.0/24',
  });

export const API_KEY_DEFAULT_RATE_LIMIT = 600;

const ipAllowlist = z.array(allowlistEntry).max(50, { error: 'IP 白名单最多 50 项' });
/** Requests per minute for this key (429 beyond). */
const rateLimitPerMinute = z.coerce
  .number({ error: '每分钟请求上限须为数字' })
  .int({ error: '每分钟请求上限须为整数' })
  .min(1, { error: '每分钟请求上限至少为 1' })
  .max(60_000, { error: '每分钟请求上限不能超过 60000' });

export const apiKeyCreateRequest = z.object({
  name: requiredText('密钥名称', 50),
  scopes: apiKeyScopes,
  /** Null: never expires. */
  expiresAt: z.iso.datetime({ error: '过期时间须为 ISO 8601 时间' }).nullable().default(null),
  ipAllowlist: ipAllowlist.default([]),
  rateLimitPerMinute: rateLimitPerMinute.default(API_KEY_DEFAULT_RATE_LIMIT),
});
export type ApiKeyCreateRequest = z.infer<typeof apiKeyCreateRequest>;

/** Name, scopes, allowlist and limit change in place; the secret never does (roll it instead). */
// No defaults here: a rename must not reset the allowlist or the limit.
export const apiKeyUpdateRequest = z.object({
  name: requiredText('密钥名称', 50).optional(),
  scopes: apiKeyScopes.optional(),
  ipAllowlist: ipAllowlist.optional(),
  rateLimitPerMinute: rateLimitPerMinute.optional(),
});
export type ApiKeyUpdateRequest = z.infer<typeof apiKeyUpdateRequest>;

export const apiKeyStatus = z.enum(['active', 'rolling', 'expired', 'revoked']);
export type ApiKeyStatus = z.infer<typeof apiKeyStatus>;
export const API_KEY_STATUS_LABELS: Record<ApiKeyStatus, string> = {
  active: '可用',
  rolling: '轮换宽限中',
  expired: '已过期',
  revoked: '已吊销',
};

export const apiKey = z.object({
  id: z.string(),
  name: z.string(),
  /** `cp_live_…abcd`: the prefix and the last four characters, all that is shown after creation. */
  maskedKey: z.string(),
  last4: z.string(),
  scopes: apiKeyScopes,
  ipAllowlist: z.array(z.string()),
  rateLimitPerMinute: z.number().int(),
  status: apiKeyStatus,
  expiresAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
  createdBy: z.object({ id: z.string(), name: z.string() }).nullable(),
  lastUsedAt: z.iso.datetime().nullable(),
  lastUsedIp: z.string().nullable(),
  /** Set on the old key of a roll: it works until `expiresAt`, then only the new one does. */
  rolledToId: z.string().nullable(),
  revokedAt: z.iso.datetime().nullable(),
});
export type ApiKey = z.infer<typeof apiKey>;

/** The only answer that carries the whole key: shown once, never again. */
export const apiKeyCreated = z.object({ key: apiKey, secret: z.string() });
export type ApiKeyCreated = z.infer<typeof apiKeyCreated>;

export const API_KEY_ROLL_GRACE_HOURS = [0, 1, 24, 72, 168] as const;
export const apiKeyRollRequest = z.object({
  graceHours: z.coerce
    .number({ error: '宽限期须为数字' })
    .refine((h) => (API_KEY_ROLL_GRACE_HOURS as readonly number[]).includes(h), {
      error: `宽限期须为 ${API_KEY_ROLL_GRACE_HOURS.join('、')} 小时之一`,
    })
    .default(24),
});
export type ApiKeyRollRequest = z.infer<typeof apiKeyRollRequest>;

export const apiKeyRequestLogEntry = z.object({
  id: z.string(),
  at: z.iso.datetime(),
  method: z.string(),
  path: z.string(),
  status: z.number().int(),
  latencyMs: z.number().int(),
  ip: z.string(),
});
export type ApiKeyRequestLogEntry = z.infer<typeof apiKeyRequestLogEntry>;
export const apiKeyRequestLogQuery = pageQuery.extend({
  status: z.enum(['all', 'success', 'error']).default('all'),
});
export const apiKeyRequestLog = paged(apiKeyRequestLogEntry);
export type ApiKeyRequestLogQuery = z.infer<typeof apiKeyRequestLogQuery>;

/** GET /opendock/v1/me: the key a request was made with, so a customer can check theirs. */
export const apiKeyIdentity = z.object({
  keyId: z.string(),
  projectId: z.string(),
  name: z.string(),
  scopes: apiKeyScopes,
  rateLimitPerMinute: z.number().int(),
});
export type ApiKeyIdentity = z.infer<typeof apiKeyIdentity>;

/** How long request logs, webhook deliveries and idempotent answers are kept. */
export const API_REQUEST_LOG_DAYS = 30;
export const WEBHOOK_DELIVERY_LOG_DAYS = 30;
export const IDEMPOTENCY_KEY_HOURS = 24;

// ---------------------------------------------------------------------------------------------
// Webhooks
// ---------------------------------------------------------------------------------------------

export const webhookEventType = z.enum([
  'call.started',
  'call.ringing',
  'call.answered',
  'call.ended',
  'call.analyzed',
  'call.recording_ready',
  'task.state_changed',
  'task.finished',
  'contact.opted_out',
  'sms.delivered',
]);
export type WebhookEventType = z.infer<typeof webhookEventType>;

/**
 * When each attempt happens after the event (Standard Webhooks / Svix's schedule): immediately,
 * then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h after the previous one; each delay
 * jittered by up to ±20% so that a receiver coming back is not hit by every retry at once.
 */
export const WEBHOOK_RETRY_DELAYS_MS = [
  0,
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3600_000,
  5 * 3600_000,
  10 * 3600_000,
  14 * 3600_000,
  20 * 3600_000,
  24 * 3600_000,
] as const;
export const WEBHOOK_TIMEOUT_MS = 15_000;
/** An endpoint whose deliveries failed without a success for this long is disabled. */
export const WEBHOOK_DISABLE_AFTER_MS = 5 * 24 * 3600_000;
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/**
 * Pending deliveries one endpoint may hold: beyond it (a receiver down or hanging for days while
 * events keep coming) the oldest are dropped, so the outbox stays bounded; each dropped delivery
 * stays in the log as failed with this reason, and the endpoint list counts them.
 */
export const WEBHOOK_PENDING_CAP = 10_000;
export const WEBHOOK_DROPPED_ERROR = `待投递事件超过 ${WEBHOOK_PENDING_CAP} 条，最早的已丢弃，未再投递`;

const webhookUrl = z
  .string({ error: '请输入接收地址' })
  .trim()
  .min(1, { error: '请输入接收地址' })
  .max(2000, { error: '接收地址不能超过 2000 个字符' })
  .refine(
    (value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
      } catch {
        return false;
      }
    },
    { error: '接收地址须为 http:// 或 https:// 开头的网址，且不含用户名密码' },
  );

export const webhookEndpointCreateRequest = z.object({
  url: webhookUrl,
  description: optionalText('描述', 200).default(''),
  events: z
    .array(webhookEventType, { error: '订阅事件须为事件类型列表' })
    .min(1, { error: '订阅事件：至少选择一个事件' })
    .transform((events) => [...new Set(events)]),
});
export type WebhookEndpointCreateRequest = z.infer<typeof webhookEndpointCreateRequest>;

/** Only what is sent changes: no defaults here (a `.partial()` of the create shape would reset the description). */
export const webhookEndpointUpdateRequest = z.object({
  url: webhookUrl.optional(),
  description: optionalText('描述', 200).optional(),
  events: webhookEndpointCreateRequest.shape.events.optional(),
  /** Re-enabling clears the failure streak; disabling stops deliveries (pending ones wait). */
  enabled: z.boolean({ error: '启用状态须为布尔值' }).optional(),
});
export type WebhookEndpointUpdateRequest = z.infer<typeof webhookEndpointUpdateRequest>;

export const webhookDisabledReason = z.enum(['manual', 'gone', 'failing']);
export type WebhookDisabledReason = z.infer<typeof webhookDisabledReason>;
export const WEBHOOK_DISABLED_REASON_LABELS: Record<WebhookDisabledReason, string> = {
  manual: '已手动停用',
  gone: '接收方返回 410 Gone，已自动停用',
  failing: '连续 5 天投递失败，已自动停用',
};

export const webhookEndpoint = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string(),
  events: z.array(webhookEventType),
  enabled: z.boolean(),
  disabledReason: webhookDisabledReason.nullable(),
  disabledAt: z.iso.datetime().nullable(),
  /** First failure of the current streak; null when the last delivery succeeded. */
  failingSince: z.iso.datetime().nullable(),
  /** The previous secret still signs until then (after a roll). */
  previousSecretUntil: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
  /** Deliveries of the last 24 hours, for the list. */
  recent: z.object({
    succeeded: z.number().int(),
    failed: z.number().int(),
    pending: z.number().int(),
    /** Of the failed: dropped unsent because the endpoint's backlog passed WEBHOOK_PENDING_CAP. */
    dropped: z.number().int(),
  }),
});
export type WebhookEndpoint = z.infer<typeof webhookEndpoint>;

/** Owners and admins may read the signing secret (receivers need it to verify). */
export const webhookSecret = z.object({ secret: z.string() });

export const webhookSecretRollRequest = z.object({
  /** The old secret keeps signing (both signatures sent) for this long. */
  graceHours: apiKeyRollRequest.shape.graceHours,
});

export const webhookDeliveryStatus = z.enum(['pending', 'succeeded', 'failed']);
export type WebhookDeliveryStatus = z.infer<typeof webhookDeliveryStatus>;
export const WEBHOOK_DELIVERY_STATUS_LABELS: Record<WebhookDeliveryStatus, string> = {
  pending: '投递中',
  succeeded: '成功',
  failed: '失败',
};

export const webhookDelivery = z.object({
  id: z.string(),
  /** The `webhook-id` header: the same on every attempt and replay of this event. */
  eventId: z.string(),
  eventType: webhookEventType,
  status: webhookDeliveryStatus,
  attempts: z.number().int(),
  lastStatusCode: z.number().int().nullable(),
  lastDurationMs: z.number().int().nullable(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
  test: z.boolean(),
});
export type WebhookDelivery = z.infer<typeof webhookDelivery>;

export const webhookAttempt = z.object({
  id: z.string(),
  at: z.iso.datetime(),
  trigger: z.enum(['auto', 'replay']),
  statusCode: z.number().int().nullable(),
  durationMs: z.number().int(),
  error: z.string().nullable(),
  requestHeaders: z.record(z.string(), z.string()),
  /** At most 4 KB of what the receiver answered. */
  responseBody: z.string().nullable(),
});
export type WebhookAttempt = z.infer<typeof webhookAttempt>;

export const webhookDeliveryDetail = webhookDelivery.extend({
  /** The JSON body sent (the same on every attempt). */
  payload: z.unknown(),
  attemptLog: z.array(webhookAttempt),
});
export type WebhookDeliveryDetail = z.infer<typeof webhookDeliveryDetail>;

export const webhookDeliveryQuery = pageQuery.extend({
  status: z.enum(['all', 'pending', 'succeeded', 'failed']).default('all'),
  eventType: webhookEventType.optional(),
});
export const webhookDeliveryList = paged(webhookDelivery);

export const webhookTestRequest = z.object({
  eventType: webhookEventType.default('call.ended'),
});
