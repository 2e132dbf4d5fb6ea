import { z } from 'zod';
import { optionalText, paged, pageQuery } from './common';
import { AUDIT_ACTION_LABELS, type AuditAction } from './roles';

/** Entries older than this are deleted by the hourly retention sweep. */
export const AUDIT_RETENTION_DAYS = 180;

export const auditAction = z.enum(Object.keys(AUDIT_ACTION_LABELS) as [AuditAction, ...AuditAction[]], {
  error: '操作类型不支持',
});

/** The filters of the audit log; the export uses the same ones. */
export const auditLogFilters = z
  .object({
    action: auditAction.optional(),
    /** Part of the actor (an e-mail, or an API key's name for the open API). */
    actor: optionalText('操作人', 100).optional(),
    from: z.iso.datetime({ error: '开始时间须为 ISO 8601 时间' }).optional(),
    to: z.iso.datetime({ error: '结束时间须为 ISO 8601 时间' }).optional(),
  })
  .superRefine((f, ctx) => {
    if (f.from && f.to && new Date(f.from) > new Date(f.to))
      ctx.addIssue({ code: 'custom', path: ['to'], message: '结束时间不能早于开始时间' });
  });
export type AuditLogFilters = z.infer<typeof auditLogFilters>;

export const auditLogQuery = z.intersection(pageQuery, auditLogFilters);
export type AuditLogQuery = z.infer<typeof auditLogQuery>;

export const auditEntry = z
  .object({
    id: z.string(),
    action: z.string(),
    /** The action's Chinese name (AUDIT_ACTION_LABELS), or the action itself when unknown. */
    actionLabel: z.string(),
    /** An e-mail; for the open API the key's name and prefix; for a failed login the account typed. */
    actor: z.string(),
    targetType: z.string(),
    targetId: z.string(),
    summary: z.string(),
    detail: z.record(z.string(), z.unknown()),
    ip: z.string(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'AuditEntry' });
export type AuditEntryView = z.infer<typeof auditEntry>;

export const auditLogList = paged(auditEntry).meta({ id: 'AuditLogList' });
export type AuditLogList = z.infer<typeof auditLogList>;

/**
 * A login session of the current user. `id` is the first 16 hex digits of the token's SHA-256
 * hash: enough to name a session among a user's few, and useless for finding the token.
 */
export const userSession = z
  .object({
    id: z.string(),
    /** Browser and system read from the user agent, e.g. "Chrome 120 · Windows". */
    device: z.string(),
    userAgent: z.string(),
    ip: z.string(),
    createdAt: z.iso.datetime(),
    /** Refreshed at most hourly while the session is used. */
    lastSeenAt: z.iso.datetime(),
    current: z.boolean(),
  })
  .meta({ id: 'UserSession' });
export type UserSession = z.infer<typeof userSession>;

export const sessionIdParams = z.object({
  id: z.string().regex(/^[0-9a-f]{16}$/, { error: '会话编号须为 16 位十六进制字符' }),
});
