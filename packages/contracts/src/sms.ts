import { z } from 'zod';

/**
 * 短信管理. In mainland China every SMS carries an approved signature (签名, shown as 【名称】) and
 * an approved template (模板); marketing SMS carry opt-out text and keep to sending hours; carriers
 * report delivery.
 */

export const smsTemplateType = z.enum(['verification', 'notification', 'marketing'], {
  error: '模板类型须为 verification（验证码）、notification（通知）或 marketing（推广）',
});
export type SmsTemplateType = z.infer<typeof smsTemplateType>;
export const SMS_TEMPLATE_TYPE_LABELS: Record<SmsTemplateType, string> = {
  verification: '验证码',
  notification: '通知',
  marketing: '推广',
};

export const smsSignatureSource = z.enum(
  ['enterprise', 'app', 'website', 'official_account', 'mini_program', 'trademark'],
  { error: '签名来源不支持' },
);
export type SmsSignatureSource = z.infer<typeof smsSignatureSource>;
export const SMS_SIGNATURE_SOURCE_LABELS: Record<SmsSignatureSource, string> = {
  enterprise: '企业',
  app: 'App',
  website: '网站',
  official_account: '公众号',
  mini_program: '小程序',
  trademark: '商标',
};

/** 待提交 → 审核中 → 已通过 / 未通过 → 已撤回 */
export const smsReviewStatus = z.enum(['draft', 'reviewing', 'approved', 'rejected', 'withdrawn']);
export type SmsReviewStatus = z.infer<typeof smsReviewStatus>;
export const SMS_REVIEW_STATUS_LABELS: Record<SmsReviewStatus, string> = {
  draft: '待提交',
  reviewing: '审核中',
  approved: '已通过',
  rejected: '未通过',
  withdrawn: '已撤回',
};

/** The content limit of a template (the vendors' own). */
export const SMS_TEMPLATE_MAX_LENGTH = 500;
/** One SMS part holds 70 characters; a longer text is split into parts of 67 (the rest is the header). */
export const SMS_SINGLE_PART_LENGTH = 70;
export const SMS_MULTI_PART_LENGTH = 67;
/** What a 推广 template must end with, so a recipient can opt out. */
export const SMS_MARKETING_OPT_OUT = '拒收请回复R';

/** One rule of the template linter, what it says when broken, and how bad that is. */
export const smsLintIssue = z.object({
  rule: z.string(),
  level: z.enum(['error', 'warning']),
  message: z.string(),
});
export type SmsLintIssue = z.infer<typeof smsLintIssue>;

/** 签名名称: 2–12 Chinese characters, letters or digits; the product adds the brackets. */
export const SMS_SIGNATURE_NAME = /^[\u4e00-\u9fa5A-Za-z0-9]{2,12}$/;

export const smsSignatureWriteRequest = z
  .object({
    name: z.string({ error: '请输入签名名称' }).trim().regex(SMS_SIGNATURE_NAME, {
      error: '签名名称须为 2–12 个中文、英文或数字，不含【】等符号（括号由系统添加）',
    }),
    source: smsSignatureSource,
    remark: z.string().trim().max(200, { error: '申请说明不能超过 200 个字符' }).default(''),
  })
  .meta({ id: 'SmsSignatureWriteRequest' });
export type SmsSignatureWriteRequest = z.infer<typeof smsSignatureWriteRequest>;

const reviewFields = {
  status: smsReviewStatus,
  /** Why the reviewer refused it (未通过). */
  rejectReason: z.string().nullable(),
  /** The provider it went to for review; null before submission. */
  provider: z.string().nullable(),
  submittedAt: z.iso.datetime().nullable(),
  reviewedAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
};

export const smsSignature = z
  .object({
    id: z.string(),
    name: z.string(),
    source: smsSignatureSource,
    remark: z.string(),
    /** The proof file's name as uploaded; null before one is. */
    proofName: z.string().nullable(),
    ...reviewFields,
  })
  .meta({ id: 'SmsSignature' });
export type SmsSignature = z.infer<typeof smsSignature>;

export const smsTemplateWriteRequest = z
  .object({
    name: z.string({ error: '请输入模板名称' }).trim().min(1, { error: '请输入模板名称' }).max(30, {
      error: '模板名称不能超过 30 个字符',
    }),
    type: smsTemplateType,
    content: z
      .string({ error: '请输入模板内容' })
      .trim()
      .min(1, { error: '请输入模板内容' })
      .max(SMS_TEMPLATE_MAX_LENGTH, { error: `模板内容不能超过 ${SMS_TEMPLATE_MAX_LENGTH} 个字符` }),
    remark: z.string().trim().max(200, { error: '申请说明不能超过 200 个字符' }).default(''),
  })
  .meta({ id: 'SmsTemplateWriteRequest' });
export type SmsTemplateWriteRequest = z.infer<typeof smsTemplateWriteRequest>;

export const smsTemplate = z
  .object({
    id: z.string(),
    name: z.string(),
    type: smsTemplateType,
    content: z.string(),
    /** ${name} variables in order of first appearance. */
    variables: z.array(z.string()),
    remark: z.string(),
    ...reviewFields,
  })
  .meta({ id: 'SmsTemplate' });
export type SmsTemplate = z.infer<typeof smsTemplate>;

export const smsReviewListQuery = z.object({
  page: z.coerce.number({ error: '页码须为数字' }).int().min(1, { error: '页码至少为 1' }).default(1),
  pageSize: z.coerce
    .number({ error: '每页条数须为数字' })
    .int()
    .min(1)
    .max(100, { error: '每页最多 100 条' })
    .default(20),
  status: smsReviewStatus.optional(),
  name: z.string().trim().max(30).optional(),
});
export type SmsReviewListQuery = z.infer<typeof smsReviewListQuery>;

/** 短信服务商 of a project: the development outbox (no network), Aliyun or Tencent Cloud. */
export const smsProviderKind = z.enum(['outbox', 'aliyun', 'tencent'], {
  error: '短信服务商须为 outbox（开发发件箱）、aliyun（阿里云）或 tencent（腾讯云）',
});
export type SmsProviderKind = z.infer<typeof smsProviderKind>;
export const SMS_PROVIDER_LABELS: Record<SmsProviderKind, string> = {
  outbox: '开发发件箱（不实际发送）',
  aliyun: '阿里云短信',
  tencent: '腾讯云短信',
};

const dailyCap = z
  .number({ error: '每号码每日上限须为数字' })
  .int({ error: '每号码每日上限须为整数' })
  .min(0, { error: '每号码每日上限不能小于 0' })
  .max(50, { error: '每号码每日上限不能超过 50' });
const credential = (label: string, max = 128) =>
  z
    .string({ error: `请输入${label}` })
    .trim()
    .min(1, { error: `请输入${label}` })
    .max(max, { error: `${label}不能超过 ${max} 个字符` });

/**
 * Saving the provider: a secret left out keeps the stored one (the console never sees it), so
 * changing the daily cap does not mean typing the secret again.
 */
export const smsSettingsUpdateRequest = z
  .discriminatedUnion(
    'provider',
    [
      z.object({ provider: z.literal('outbox'), dailyCapPerNumber: dailyCap }),
      z.object({
        provider: z.literal('aliyun'),
        accessKeyId: credential('AccessKey ID'),
        accessKeySecret: credential('AccessKey Secret').optional(),
        /** 资质 ID of the account's approved qualification: Aliyun's CreateSmsSign requires one. */
        qualificationId: z
          .string({ error: '资质 ID 须为数字' })
          .trim()
          .regex(/^\d{1,20}$/, { error: '资质 ID 须为数字' })
          .optional(),
        dailyCapPerNumber: dailyCap,
      }),
      z.object({
        provider: z.literal('tencent'),
        secretId: credential('SecretId'),
        secretKey: credential('SecretKey').optional(),
        sdkAppId: z
          .string({ error: '请输入 SmsSdkAppId' })
          .trim()
          .regex(/^\d{4,20}$/, { error: 'SmsSdkAppId 须为数字' }),
        region: z
          .string({ error: '请输入地域' })
          .trim()
          .regex(/^[a-z]{2,4}-[a-z]+(-\d+)?$/, { error: '地域格式不正确，例如 ap-guangzhou' }),
        dailyCapPerNumber: dailyCap,
      }),
    ],
    { error: '短信服务商须为 outbox（开发发件箱）、aliyun（阿里云）或 tencent（腾讯云）' },
  )
  .meta({ id: 'SmsSettingsUpdateRequest' });
export type SmsSettingsUpdateRequest = z.infer<typeof smsSettingsUpdateRequest>;

export const smsSettingsView = z
  .object({
    provider: smsProviderKind,
    /** The key id in full (not a secret) and whether a secret is stored; the secret never leaves the server. */
    keyId: z.string().nullable(),
    hasSecret: z.boolean(),
    sdkAppId: z.string().nullable(),
    region: z.string().nullable(),
    /** Aliyun's 资质 ID used when applying for signatures. */
    qualificationId: z.string().nullable(),
    dailyCapPerNumber: z.number().int(),
    updatedAt: z.iso.datetime().nullable(),
    /**
     * Where the cloud provider pushes delivery receipts and replies (configured in its console);
     * null for the development outbox. The addresses carry a token: keep them private.
     */
    pushUrls: z.object({ receipts: z.string(), replies: z.string() }).nullable(),
  })
  .meta({ id: 'SmsSettings' });
export type SmsSettingsView = z.infer<typeof smsSettingsView>;
