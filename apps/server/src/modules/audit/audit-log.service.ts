import {
  AUDIT_ACTION_LABELS,
  AUDIT_RETENTION_DAYS,
  type AuditEntryView,
  type AuditLogFilters,
  type AuditLogQuery,
} from '@callpilot/contracts';
import { and, count, desc, eq, gte, ilike, isNull, lt, lte, or, type SQL } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { auditLog } from '../../db/schema';
import { CSV_CONTENT_TYPE, csvFile } from '../../lib/spreadsheet';

/** Whose entries a reader may see: one project's, or one user's own account events. */
export type AuditScope = { projectId: string } | { userId: string; email: string };

/** An export holds at most this many rows (newest first); a narrower filter gets the rest. */
export const AUDIT_EXPORT_MAX_ROWS = 50_000;

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

function scopeCondition(scope: AuditScope): SQL {
  if ('projectId' in scope) return eq(auditLog.projectId, scope.projectId);
  // Account events carry no project. A failed login has no user id (the account may not exist),
  // so the user's own are found by the e-mail typed.
  return and(
    isNull(auditLog.projectId),
    or(
      eq(auditLog.userId, scope.userId),
      and(isNull(auditLog.userId), eq(auditLog.action, 'auth.login_failed'), eq(auditLog.actor, scope.email)),
    ),
  )!;
}

function filterConditions(scope: AuditScope, f: AuditLogFilters): SQL {
  const conditions: SQL[] = [scopeCondition(scope)];
  if (f.action) conditions.push(eq(auditLog.action, f.action));
  if (f.actor) conditions.push(ilike(auditLog.actor, `%${escapeLike(f.actor)}%`));
  if (f.from) conditions.push(gte(auditLog.createdAt, new Date(f.from)));
  if (f.to) conditions.push(lte(auditLog.createdAt, new Date(f.to)));
  return and(...conditions)!;
}

type Row = typeof auditLog.$inferSelect;

const actionLabel = (action: string) =>
  (AUDIT_ACTION_LABELS as Record<string, string | undefined>)[action] ?? action;

const toView = (row: Row): AuditEntryView => ({
  id: row.id,
  action: row.action,
  actionLabel: actionLabel(row.action),
  actor: row.actor,
  targetType: row.targetType,
  targetId: row.targetId,
  summary: row.summary,
  detail: row.detail,
  ip: row.ip,
  createdAt: row.createdAt.toISOString(),
});

export async function listAuditLog(db: Database, scope: AuditScope, query: AuditLogQuery) {
  const where = filterConditions(scope, query);
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(auditLog)
      .where(where)
      .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
    db.select({ n: count() }).from(auditLog).where(where),
  ]);
  return { items: rows.map(toView), total: total?.n ?? 0, page: query.page, pageSize: query.pageSize };
}

/** Beijing time, as the console shows it, so the file reads the same as the page. */
const beijingTime = (at: Date) =>
  new Date(at.getTime() + 8 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');

export async function exportAuditLogCsv(db: Database, scope: AuditScope, filters: AuditLogFilters) {
  const rows = await db
    .select()
    .from(auditLog)
    .where(filterConditions(scope, filters))
    .orderBy(desc(auditLog.createdAt), desc(auditLog.id))
    .limit(AUDIT_EXPORT_MAX_ROWS);
  const stamp = beijingTime(new Date()).replace(/[-: ]/g, '').slice(0, 12);
  return {
    fileName: `操作日志-${stamp}.csv`,
    contentType: CSV_CONTENT_TYPE,
    rows: rows.length,
    body: csvFile(
      ['时间', '操作人', '操作', '对象类型', '对象', '说明', 'IP'],
      rows.map((r) => [
        beijingTime(r.createdAt),
        r.actor,
        actionLabel(r.action),
        r.targetType,
        r.targetId,
        r.summary,
        r.ip,
      ]),
    ),
  };
}

/** Deletes entries past the retention period; the hourly retention sweep calls it. */
export async function sweepAuditLog(db: Database, now = new Date()) {
  await db
    .delete(auditLog)
    .where(lt(auditLog.createdAt, new Date(now.getTime() - AUDIT_RETENTION_DAYS * 24 * 3600_000)));
}
