import type { ProjectNumber } from '@callpilot/contracts';
import { and, asc, eq, inArray, isNotNull, isNull, ne, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { assistants, callFlows, callTasks, projectLimits, projectNumbers, sipTrunks } from '../../db/schema';
import type { InboundRoutes } from '../../engine/call/ports';
import { badRequest, conflict, notFound } from '../../lib/errors';
import { normalizePhone } from '../../lib/phone';
import { type ProjectAccess, requireManager } from '../../plugins/project-access';
import { assertBindableFlow } from '../flows/flows.service';

type NumberRow = typeof projectNumbers.$inferSelect;

const toNumber = (
  row: NumberRow,
  names: { assistantName?: string | null; flowName?: string | null; trunkName?: string | null } = {},
): ProjectNumber => ({
  number: row.number,
  label: row.label,
  enabled: row.enabled,
  inboundAssistantId: row.inboundAssistantId,
  inboundAssistantName: row.inboundAssistantId ? (names.assistantName ?? null) : null,
  inboundFlowId: row.inboundFlowId,
  inboundFlowName: row.inboundFlowId ? (names.flowName ?? null) : null,
  trunkId: row.trunkId,
  trunkName: row.trunkId ? (names.trunkName ?? null) : null,
  restingSince: row.restingSince ? row.restingSince.toISOString() : null,
  createdAt: row.createdAt.toISOString(),
});

/** A number with the names of the assistant or flow answering it and of its trunk. */
async function withNames(db: Database, row: NumberRow): Promise<ProjectNumber> {
  const [assistant] = row.inboundAssistantId
    ? await db
        .select({ name: assistants.name })
        .from(assistants)
        .where(eq(assistants.id, row.inboundAssistantId))
        .limit(1)
    : [];
  const [flow] = row.inboundFlowId
    ? await db
        .select({ name: callFlows.name })
        .from(callFlows)
        .where(and(eq(callFlows.projectId, row.projectId), eq(callFlows.id, row.inboundFlowId)))
        .limit(1)
    : [];
  const [trunk] = row.trunkId
    ? await db.select({ name: sipTrunks.name }).from(sipTrunks).where(eq(sipTrunks.id, row.trunkId)).limit(1)
    : [];
  return toNumber(row, { assistantName: assistant?.name, flowName: flow?.name, trunkName: trunk?.name });
}

/**
 * The trunk a number is put on must be one of its project's: another project's trunk id is
 * answered as not existing (the database's (project_id, trunk_id) reference refuses it too).
 */
async function trunkOfProjectOrThrow(db: Database, projectId: string, trunkId: string | null) {
  if (trunkId === null) return null;
  const [trunk] = await db
    .select({ id: sipTrunks.id })
    .from(sipTrunks)
    .where(and(eq(sipTrunks.projectId, projectId), eq(sipTrunks.id, trunkId)))
    .limit(1);
  if (!trunk) throw badRequest('字段 trunkId：线路不存在，请在线路管理中选择本项目的线路');
  return trunk.id;
}

/** Caller numbers are shown to every callee: only the project's owner and admins manage them. */
export function assertCanManageNumbers(project: ProjectAccess): void {
  requireManager(project, '仅项目所有者或管理员可以管理外显号码');
}

/** The stored form of a caller number (11-digit mobile or 0-prefixed landline), or a 400 naming the field. */
export function callerNumberOrThrow(raw: string, field = 'number'): string {
  const normalized = normalizePhone(raw);
  if (!normalized.ok) throw badRequest(`字段 ${field}：${normalized.reason}`);
  return normalized.phone;
}

export async function listNumbers(db: Database, projectId: string): Promise<ProjectNumber[]> {
  const rows = await db
    .select({
      number: projectNumbers,
      assistantName: assistants.name,
      flowName: callFlows.name,
      trunkName: sipTrunks.name,
    })
    .from(projectNumbers)
    .leftJoin(assistants, eq(assistants.id, projectNumbers.inboundAssistantId))
    .leftJoin(
      callFlows,
      and(eq(callFlows.projectId, projectNumbers.projectId), eq(callFlows.id, projectNumbers.inboundFlowId)),
    )
    .leftJoin(sipTrunks, eq(sipTrunks.id, projectNumbers.trunkId))
    .where(eq(projectNumbers.projectId, projectId))
    .orderBy(asc(projectNumbers.createdAt), asc(projectNumbers.number));
  return rows.map((r) => toNumber(r.number, r));
}

/** For the tasks module: which of these numbers are the project's enabled caller numbers (stored form). */
export async function enabledNumbers(db: Database, projectId: string): Promise<string[]> {
  const rows = await db
    .select({ number: projectNumbers.number })
    .from(projectNumbers)
    .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.enabled, true)));
  return rows.map((r) => r.number);
}

/**
 * The numbers tasks may call from, per project: enabled and not resting (休息中). A task's numbers
 * outside this set are skipped by the dialer; a task left with none calls nothing (the home page
 * says so) rather than falling back to a number the team did not choose.
 */
export async function usableCallerNumbers(
  db: Database,
  projectIds: string[],
): Promise<Map<string, Set<string>>> {
  const usable = new Map<string, Set<string>>(projectIds.map((id) => [id, new Set<string>()]));
  if (projectIds.length === 0) return usable;
  const rows = await db
    .select({ projectId: projectNumbers.projectId, number: projectNumbers.number })
    .from(projectNumbers)
    .where(
      and(
        inArray(projectNumbers.projectId, projectIds),
        eq(projectNumbers.enabled, true),
        isNull(projectNumbers.restingSince),
      ),
    );
  for (const r of rows) usable.get(r.projectId)?.add(r.number);
  return usable;
}

export async function createNumber(
  db: Database,
  projectId: string,
  input: { number: string; label: string; enabled: boolean; trunkId?: string | null },
): Promise<ProjectNumber> {
  const number = callerNumberOrThrow(input.number);
  const trunkId = await trunkOfProjectOrThrow(db, projectId, input.trunkId ?? null);
  const [row] = await db
    .insert(projectNumbers)
    .values({ projectId, number, label: input.label, enabled: input.enabled, trunkId })
    .onConflictDoNothing()
    .returning();
  if (!row) throw conflict(`号码 ${number} 已存在`);
  return withNames(db, row);
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
  input: { label?: string; enabled?: boolean; trunkId?: string | null; resting?: boolean },
  now = Date.now(),
): Promise<ProjectNumber> {
  const current = await findNumber(db, projectId, raw);
  const trunkId =
    input.trunkId === undefined ? current.trunkId : await trunkOfProjectOrThrow(db, projectId, input.trunkId);
  // Resting again keeps the first moment: "休息中 since" is how long the number has been left alone.
  const restingSince =
    input.resting === undefined
      ? current.restingSince
      : input.resting
        ? (current.restingSince ?? new Date(now))
        : null;
  const [row] = await db
    .update(projectNumbers)
    .set({
      label: input.label ?? current.label,
      enabled: input.enabled ?? current.enabled,
      trunkId,
      restingSince,
    })
    .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.number, current.number)))
    .returning();
  return withNames(db, row!);
}

/**
 * 呼入: the published version of the assistant or of the call flow answers calls to the number
 * from now on (both null unbinds it). A number reaches one project only, so a number another
 * project has bound, to either, is refused.
 */
export async function bindInbound(
  db: Database,
  projectId: string,
  raw: string,
  target: { assistantId: string | null; flowId: string | null },
): Promise<ProjectNumber> {
  const { assistantId, flowId } = target;
  if (assistantId && flowId) throw badRequest('一个号码只能绑定小助手或通话流程中的一个');
  const current = await findNumber(db, projectId, raw);
  if (assistantId) {
    const [assistant] = await db
      .select({ publishedVersion: assistants.publishedVersion })
      .from(assistants)
      .where(
        and(
          eq(assistants.id, assistantId),
          eq(assistants.projectId, projectId),
          isNull(assistants.deletedAt),
        ),
      )
      .limit(1);
    if (!assistant) throw badRequest('字段 assistantId：小助手不存在或已删除');
    if (!assistant.publishedVersion) {
      throw badRequest('字段 assistantId：小助手尚未发布，发布后才能接听来电');
    }
  }
  if (flowId) await assertBindableFlow(db, projectId, flowId);
  if (assistantId || flowId) {
    const [taken] = await db
      .select({ projectId: projectNumbers.projectId })
      .from(projectNumbers)
      .where(
        and(
          eq(projectNumbers.number, current.number),
          ne(projectNumbers.projectId, projectId),
          or(isNotNull(projectNumbers.inboundAssistantId), isNotNull(projectNumbers.inboundFlowId)),
        ),
      )
      .limit(1);
    if (taken) throw conflict(`号码 ${current.number} 的来电已由其他项目接听，不能重复绑定`);
  }
  try {
    const [row] = await db
      .update(projectNumbers)
      .set({ inboundAssistantId: assistantId, inboundFlowId: flowId })
      .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.number, current.number)))
      .returning();
    return withNames(db, row!);
  } catch (err) {
    // Two projects binding the same number at once: the unique index decides.
    if ((err as { code?: string }).code === '23505' || /unique/i.test(String(err))) {
      throw conflict(`号码 ${current.number} 的来电已由其他项目接听，不能重复绑定`);
    }
    throw err;
  }
}

/** Projects without balance limits take this many inbound calls at once (like outbound's 200). */
export const DEFAULT_CALLIN_CAP = 200;

/** The engine's view of the numbers (see engine/call/ports.ts): where a dialled number's calls go. */
export const inboundRoutes = (db: Database): InboundRoutes => ({
  async lookup(number) {
    const rows = await db
      .select({
        projectId: projectNumbers.projectId,
        assistantId: projectNumbers.inboundAssistantId,
        flowId: projectNumbers.inboundFlowId,
        enabled: projectNumbers.enabled,
        hasBalance: projectLimits.hasBalance,
        concurrentCallin: projectLimits.concurrentCallin,
      })
      .from(projectNumbers)
      .leftJoin(projectLimits, eq(projectLimits.projectId, projectNumbers.projectId))
      .where(eq(projectNumbers.number, number))
      // The project that bound it first; otherwise any project owning it (to record the refusal).
      .orderBy(
        sql`(${projectNumbers.inboundAssistantId} is null and ${projectNumbers.inboundFlowId} is null)`,
        asc(projectNumbers.createdAt),
      )
      .limit(1);
    const row = rows[0];
    if (!row) return null;
    return {
      projectId: row.projectId,
      assistantId: row.enabled ? row.assistantId : null,
      flowId: row.enabled ? row.flowId : null,
      callinLimit: row.hasBalance ? (row.concurrentCallin ?? 0) : DEFAULT_CALLIN_CAP,
    };
  },
});

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
