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
