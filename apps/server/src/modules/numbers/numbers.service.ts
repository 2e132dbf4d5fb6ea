import type { ProjectNumber } from '@callpilot/contracts';
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { callTasks, projectNumbers } from '../../db/schema';
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors';
import { normalizePhone } from '../../lib/phone';
import type { ProjectAccess } from '../../plugins/project-access';

const toNumber = (row: typeof projectNumbers.$inferSelect): ProjectNumber => ({
  number: row.number,
  label: row.label,
  enabled: row.enabled,
  inboundAssistantId: null,
  inboundAssistantName: null,
  createdAt: row.createdAt.toISOString(),
});

/** Caller numbers are shown to every callee: only the project's owner and admins manage them. */
export function assertCanManageNumbers(project: ProjectAccess): void {
  if (project.role === 'member') throw forbidden('仅项目所有者或管理员可以管理外显号码');
}

/** The stored form of a caller number (11-digit mobile or 0-prefixed landline), or a 400 naming the field. */
export function callerNumberOrThrow(raw: string, field = 'number'): string {
  const normalized = normalizePhone(raw);
  if (!normalized.ok) throw badRequest(`字段 ${field}：${normalized.reason}`);
  return normalized.phone;
}

export async function listNumbers(db: Database, projectId: string): Promise<ProjectNumber[]> {
  const rows = await db
    .select()
    .from(projectNumbers)
    .where(eq(projectNumbers.projectId, projectId))
    .orderBy(asc(projectNumbers.createdAt), asc(projectNumbers.number));
  return rows.map(toNumber);
}

/** For the tasks module: which of these numbers are the project's enabled caller numbers (stored form). */
export async function enabledNumbers(db: Database, projectId: string): Promise<string[]> {
  const rows = await db
    .select({ number: projectNumbers.number })
    .from(projectNumbers)
    .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.enabled, true)));
  return rows.map((r) => r.number);
}

export async function createNumber(
  db: Database,
  projectId: string,
  input: { number: string; label: string; enabled: boolean },
): Promise<ProjectNumber> {
  const number = callerNumberOrThrow(input.number);
  const [row] = await db
    .insert(projectNumbers)
    .values({ projectId, number, label: input.label, enabled: input.enabled })
    .onConflictDoNothing()
    .returning();
  if (!row) throw conflict(`号码 ${number} 已存在`);
  return toNumber(row);
}

async function findNumber(db: Database, projectId: string, raw: string) {
  const normalized = normalizePhone(raw);
  const number = normalized.ok ? normalized.phone : raw;
  const [row] = await db
    .select()
    .from(projectNumbers)
    .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.number, number)))
    .limit(1);
  if (!row) throw notFound('外显号码不存在');
  return row;
}

export async function updateNumber(
  db: Database,
  projectId: string,
  raw: string,
  input: { label?: string; enabled?: boolean },
): Promise<ProjectNumber> {
  const current = await findNumber(db, projectId, raw);
  const [row] = await db
    .update(projectNumbers)
    .set({ label: input.label ?? current.label, enabled: input.enabled ?? current.enabled })
    .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.number, current.number)))
    .returning();
  return toNumber(row!);
}

/**
 * A number an unfinished task shows to callees cannot disappear under it: the dialer would
 * have nothing to present. Disabling it is allowed (the task's preflight reports that).
 */
export async function deleteNumber(db: Database, projectId: string, raw: string): Promise<void> {
  const current = await findNumber(db, projectId, raw);
  const [user] = await db
    .select({ name: callTasks.name })
    .from(callTasks)
    .where(
      and(
        eq(callTasks.projectId, projectId),
        isNull(callTasks.deletedAt),
        inArray(callTasks.state, ['pending', 'running', 'paused']),
        sql`${callTasks.settings}->'callerNumbers' @> ${JSON.stringify([current.number])}::jsonb`,
      ),
    )
    .limit(1);
  if (user) throw conflict(`号码正被任务“${user.name}”使用，请先停止该任务或更换它的外显号码`);
  await db
    .delete(projectNumbers)
    .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.number, current.number)));
}
