import { z } from 'zod';
import { intentGrade } from './assistants';
import { entityId, paged, pageQuery } from './common';
import { smsProviderKind, smsTemplateType } from './sms';

/**
 * Sending SMS: every send is a record (sms_messages) with its status timeline. Single sends, batch
 * sends, follow-up rules after calls, the assistant's send_sms, flows' 发送短信 node and the open API
 * all end in the same queue (apps/server/src/modules/sms/sms-send.service.ts).
 */

/** A mainland mobile number as stored: 11 digits, +86 / 86 / spaces / dashes taken off. */
export const MAINLAND_MOBILE = /^1[3-9]\d{9}$/;
export function normalizeMobile(input: string): string {
  const digits = input.replace(/[\s-]/g, '');
  const bare = digits.replace(/^(?:\+86|0086|86)(?=1\d{10}$)/, '');
  return bare;
}
export const smsPhone = z
  .string({ error: '请输入手机号' })
  .trim()
  .transform(normalizeMobile)
  .refine((v) => MAINLAND_MOBILE.test(v), { error: '手机号须为 11 位中国大陆手机号' });

export const smsMessageStatus = z.enum([
  'queued',
  'waiting',
  'submitted',
  'accepted',
  'delivered',
  'failed',
  'blocked',
]);
export type SmsMessageStatus = z.infer<typeof smsMessageStatus>;
export const SMS_MESSAGE_STATUS_LABELS: Record<SmsMessageStatus, string> = {
  queued: '待发送',
  waiting: '等待发送时段',
  submitted: '已提交',
  accepted: '运营商已接收',
  delivered: '成功',
  failed: '失败',
  blocked: '未发送',
};
/** Statuses that no longer change (a receipt may still turn accepted into delivered or failed). */
export const SMS_FINAL_STATUSES: readonly SmsMessageStatus[] = ['delivered', 'failed', 'blocked'];

export const smsSource = z.enum(['single', 'batch', 'follow_up', 'assistant', 'flow', 'api']);
export type SmsSource = z.infer<typeof smsSource>;
export const SMS_SOURCE_LABELS: Record<SmsSource, string> = {
  single: '单条发送',
  batch: '批量发送',
  follow_up: '跟进规则',
  assistant: '助手请求',
  flow: '通话流程',
  api: '开放接口',
};

/** 推广 SMS go out only between these hours, China time (later ones wait and say so). */
export const SMS_MARKETING_WINDOW = { startHour: 8, endHour: 20 } as const;
/** Replies that put the number on the project's do-not-disturb list. */
export const SMS_OPT_OUT_REPLIES = ['T', 'TD', '退订', 'R', 'N'] as const;

export const smsTimelineEntry = z.object({
  status: smsMessageStatus,
  at: z.iso.datetime(),
  /** Why, in Chinese (the carrier's reason on a failure, the window on a wait, the list on a block). */
  detail: z.string().nullable(),
});
export type SmsTimelineEntry = z.infer<typeof smsTimelineEntry>;

/** Both vendors cap a variable's value (Aliyun 35 characters for 通知/推广; Tencent 35 for 其他). */
export const SMS_VARIABLE_MAX_LENGTH = 35;
const templateVariables = z
  .record(
    z.string().max(30),
    z
      .string({ error: '变量值须为文本' })
      .max(SMS_VARIABLE_MAX_LENGTH, { error: `变量值不能超过 ${SMS_VARIABLE_MAX_LENGTH} 个字符` }),
    { error: '变量须为 { 变量名: 值 }' },
  )
  .default({});

export const smsSendRequest = z
  .object({
    phone: smsPhone,
    signatureId: entityId('签名'),
    templateId: entityId('模板'),
    variables: templateVariables,
  })
  .meta({ id: 'SmsSendRequest' });
export type SmsSendRequest = z.input<typeof smsSendRequest>;

export const smsMessage = z
  .object({
    id: z.string(),
    phone: z.string(),
    signatureName: z.string(),
    templateId: z.string().nullable(),
    templateName: z.string(),
    templateType: smsTemplateType,
    variables: z.record(z.string(), z.string()),
    /** The text as sent, 【signature】 included. */
    content: z.string(),
    parts: z.number().int(),
    provider: smsProviderKind,
    providerMessageId: z.string().nullable(),
    status: smsMessageStatus,
    errorCode: z.string().nullable(),
    errorMessage: z.string().nullable(),
    timeline: z.array(smsTimelineEntry),
    source: smsSource,
    callId: z.string().nullable(),
    taskId: z.string().nullable(),
    batchId: z.string().nullable(),
    ruleId: z.string().nullable(),
    /** When a waiting message goes out. */
    sendAfter: z.iso.datetime(),
    createdAt: z.iso.datetime(),
    submittedAt: z.iso.datetime().nullable(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'SmsMessage' });
export type SmsMessage = z.infer<typeof smsMessage>;

export const smsMessageFilters = z.object({
  from: z.iso.datetime({ offset: true, error: '开始时间须为 ISO 8601 时间' }).optional(),
  to: z.iso.datetime({ offset: true, error: '结束时间须为 ISO 8601 时间' }).optional(),
  phone: z.string().trim().max(20, { error: '号码不能超过 20 个字符' }).optional(),
  templateId: z.string().max(64).optional(),
  status: smsMessageStatus.optional(),
  source: smsSource.optional(),
  taskId: z.string().max(64).optional(),
  callId: z.string().max(64).optional(),
  batchId: z.string().max(64).optional(),
});
export type SmsMessageFilters = z.infer<typeof smsMessageFilters>;
export const smsMessageListQuery = z.intersection(pageQuery, smsMessageFilters);
export type SmsMessageListQuery = z.infer<typeof smsMessageListQuery>;
/**
 * `total` is exact up to SMS_LIST_TOTAL_CAP; past it the list says so (`totalCapped`) instead of
 * counting a million rows on every page.
 */
export const SMS_LIST_TOTAL_CAP = 10_000;
export const smsMessageList = paged(smsMessage)
  .extend({ totalCapped: z.boolean() })
  .meta({ id: 'SmsMessageList' });
export type SmsMessageList = z.infer<typeof smsMessageList>;
export const smsMessageExportQuery = z.intersection(
  smsMessageFilters,
  z.object({ format: z.enum(['csv', 'xlsx'], { error: '导出格式须为 csv 或 xlsx' }).default('csv') }),
);
export const smsMessageIdParams = z.object({ projectId: entityId('项目'), messageId: entityId('短信') });

/** 数据统计 of SMS: China days, inclusive, at most 92 days. */
export const SMS_STATISTICS_MAX_DAYS = 92;
export const smsStatisticsQuery = z
  .object({
    from: z.iso.date({ error: '开始日期须为 YYYY-MM-DD' }),
    to: z.iso.date({ error: '结束日期须为 YYYY-MM-DD' }),
    templateId: z.string().max(64).optional(),
  })
  .refine((q) => q.from <= q.to, { error: '结束日期不能早于开始日期', path: ['to'] })
  .refine((q) => (Date.parse(q.to) - Date.parse(q.from)) / 86_400_000 + 1 <= SMS_STATISTICS_MAX_DAYS, {
    error: `统计范围不能超过 ${SMS_STATISTICS_MAX_DAYS} 天`,
    path: ['from'],
  });
export type SmsStatisticsQuery = z.infer<typeof smsStatisticsQuery>;

const smsCounts = z.object({
  /** Handed to the provider (submitted, accepted, delivered, failed). */
  sent: z.number().int(),
  delivered: z.number().int(),
  failed: z.number().int(),
  /** Sent, no receipt yet. */
  pending: z.number().int(),
  /** Never sent: do-not-disturb, daily cap, not approved. */
  blocked: z.number().int(),
  /** Billed parts of what was sent. */
  parts: z.number().int(),
});
export type SmsCounts = z.infer<typeof smsCounts>;
export const smsStatistics = z
  .object({
    totals: smsCounts,
    byDay: z.array(smsCounts.extend({ day: z.string() })),
    byTemplate: z.array(smsCounts.extend({ templateId: z.string().nullable(), templateName: z.string() })),
    failureReasons: z.array(z.object({ code: z.string(), message: z.string(), count: z.number().int() })),
  })
  .meta({ id: 'SmsStatistics' });
export type SmsStatistics = z.infer<typeof smsStatistics>;

/** 免打扰 (do-not-disturb for SMS): numbers that replied T/TD/退订/R, or were added here. */
export const smsOptOut = z
  .object({
    phone: z.string(),
    source: z.enum(['reply', 'manual', 'api']),
    reply: z.string(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'SmsOptOut' });
export type SmsOptOut = z.infer<typeof smsOptOut>;
export const smsOptOutListQuery = z.intersection(
  pageQuery,
  z.object({ phone: z.string().trim().max(20).optional() }),
);
export const smsOptOutList = paged(smsOptOut);
export const smsOptOutAddRequest = z.object({ phone: smsPhone });

/**
 * 跟进规则: after a call of an assistant or a task, send a template. 'grade': the call's intent grade
 * is one of `grades`; 'requested': the assistant asked to send one during the call (send_sms).
 */
export const smsVariableSource = z.discriminatedUnion(
  'from',
  [
    /** A variable of the call (the contact's imported columns, the flow's or assistant's variables). */
    z.object({ from: z.literal('call_variable'), name: z.string().trim().min(1).max(64) }),
    z.object({ from: z.literal('contact_name') }),
    /** The project's number the call used (so the customer can call back). */
    z.object({ from: z.literal('line_number') }),
    /** What the assistant asked to send (its send_sms text), trimmed to a variable's length. */
    z.object({ from: z.literal('assistant_text') }),
    z.object({
      from: z.literal('fixed'),
      value: z.string().max(35, { error: '固定值不能超过 35 个字符' }),
    }),
  ],
  { error: '变量来源须为 call_variable、contact_name、line_number、assistant_text 或 fixed' },
);
export type SmsVariableSource = z.infer<typeof smsVariableSource>;

export const smsFollowUpRuleWriteRequest = z
  .object({
    ownerType: z.enum(['assistant', 'task'], { error: '规则须属于助手或任务' }),
    ownerId: entityId('助手或任务'),
    trigger: z.enum(['grade', 'requested'], {
      error: '触发条件须为 grade（意向等级）或 requested（助手请求）',
    }),
    grades: z.array(intentGrade).max(4).default([]),
    signatureId: entityId('签名'),
    templateId: entityId('模板'),
    variableMap: z.record(z.string(), smsVariableSource).default({}),
    enabled: z.boolean().default(true),
  })
  .refine((r) => r.trigger !== 'grade' || r.grades.length > 0, {
    error: '按意向等级触发时请至少选择一个等级',
    path: ['grades'],
  })
  .meta({ id: 'SmsFollowUpRuleWriteRequest' });
export type SmsFollowUpRuleWriteRequest = z.input<typeof smsFollowUpRuleWriteRequest>;

export const smsFollowUpRule = z
  .object({
    id: z.string(),
    ownerType: z.enum(['assistant', 'task']),
    ownerId: z.string(),
    trigger: z.enum(['grade', 'requested']),
    grades: z.array(intentGrade),
    signatureId: z.string(),
    signatureName: z.string(),
    templateId: z.string(),
    templateName: z.string(),
    variableMap: z.record(z.string(), smsVariableSource),
    enabled: z.boolean(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'SmsFollowUpRule' });
export type SmsFollowUpRule = z.infer<typeof smsFollowUpRule>;
