import { randomUUID } from 'node:crypto';
import {
  type ContactStatus,
  type EndReason,
  type IntentGrade,
  type PageQuery,
  TASK_STATE_LABELS,
  type TaskAction,
  type TaskContact,
  type TaskCounts,
  type TaskDetail,
  type TaskPreflight,
  type TaskSettings,
  type TaskState,
  type TaskSummary,
} from '@callpilot/contracts';
import { and, asc, count, desc, eq, gte, ilike, inArray, isNull, lte, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import {
  assistants,
  calls,
  callTasks,
  projectNumbers,
  taskContacts,
  taskImportRejects,
} from '../../db/schema';
import { SIM_CALLER_NUMBER } from '../../engine/call/run-call';
import {
  type CallingCalendar,
  chinaDate,
  chinaMidnight,
  DAY_MS,
  inCallingWindow,
  nextCallingMoment,
  windowsOn,
} from '../../engine/dialer/calendar';
import { maxAttemptsOf } from '../../engine/dialer/dialer';
import { badRequest, conflict, notFound } from '../../lib/errors';
import { getPublishedVersion } from '../assistants/assistants.service';
import { getLimits } from '../projects/projects.service';
import { publishTaskStateChange } from '../webhooks/event-sources';

/** Average call length the estimates assume (seconds) until a task has calls of its own. */
export const AVERAGE_CALL_SECONDS = 60;
/** Share of first calls expected to reach no one (and so use retries) in the call estimate. */
const UNREACHED_SHARE = 0.4;

export type TaskRow = typeof callTasks.$inferSelect;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

async function findTask(db: Database, projectId: string, taskId: string): Promise<TaskRow> {
  const [row] = await db
    .select()
    .from(callTasks)
    .where(and(eq(callTasks.projectId, projectId), eq(callTasks.id, taskId), isNull(callTasks.deletedAt)))
    .limit(1);
  if (!row) throw notFound('任务不存在或已删除');
  return row;
}

const emptyCounts = (): TaskCounts => ({
  total: 0,
  waiting: 0,
  dialing: 0,
  finished: 0,
  answered: 0,
  skipped: 0,
  calls: 0,
  byEndReason: {},
  byGrade: {},
});

/**
 * Contact and call counts of several tasks in three grouped queries; `contactsOnly` skips the two
 * over the tasks' calls (a big task's calls are many: the home page reads its calls from rollups).
 */
export async function countsOf(
  db: Database,
  taskIds: string[],
  { contactsOnly = false } = {},
): Promise<Map<string, TaskCounts>> {
  const result = new Map<string, TaskCounts>(taskIds.map((id) => [id, emptyCounts()]));
  if (taskIds.length === 0) return result;
  const none = Promise.resolve(
    [] as { taskId: string | null; reason?: string | null; grade?: string | null; n: number }[],
  );
  const [byStatus, byReason, byGrade] = await Promise.all([
    db
      .select({ taskId: taskContacts.taskId, status: taskContacts.status, n: count() })
      .from(taskContacts)
      .where(inArray(taskContacts.taskId, taskIds))
      .groupBy(taskContacts.taskId, taskContacts.status),
    contactsOnly
      ? none
      : db
          .select({ taskId: calls.taskId, reason: calls.endReason, n: count() })
          .from(calls)
          .where(inArray(calls.taskId, taskIds))
          .groupBy(calls.taskId, calls.endReason),
    contactsOnly
      ? none
      : db
          .select({ taskId: calls.taskId, grade: calls.intentGrade, n: count() })
          .from(calls)
          .where(and(inArray(calls.taskId, taskIds), sql`${calls.intentGrade} is not null`))
          .groupBy(calls.taskId, calls.intentGrade),
  ]);
  for (const r of byStatus) {
    const c = result.get(r.taskId)!;
    c.total += r.n;
    const status = r.status as ContactStatus;
    if (status === 'pending' || status === 'retry') c.waiting += r.n;
    else if (status === 'dialing') c.dialing += r.n;
    else c.finished += r.n;
    if (status === 'done') c.answered += r.n;
    if (status === 'skipped') c.skipped += r.n;
  }
  for (const r of byReason) {
    const c = result.get(r.taskId as string)!;
    c.calls += r.n;
    if (r.reason) c.byEndReason[r.reason as EndReason] = r.n;
  }
  for (const r of byGrade) result.get(r.taskId as string)!.byGrade[r.grade as IntentGrade] = r.n;
  return result;
}

/** When a live task cannot call now: the next moment it may (start date, window, holiday). */
function waitingUntil(row: TaskRow, now: number): string | null {
  if (row.state !== 'running' && row.state !== 'pending') return null;
  const settings = row.settings as TaskSettings;
  if (row.state === 'running' && inCallingWindow(settings, now)) return null;
  const next = nextCallingMoment(settings, now);
  return next === null ? null : new Date(next).toISOString();
}

export function toSummary(row: TaskRow, counts: TaskCounts, now: number): TaskSummary {
  const settings = row.settings as TaskSettings;
  return {
    id: row.id,
    name: row.name,
    state: row.state,
    assistantId: row.assistantId,
    assistantName: row.assistantName,
    assistantVersion: row.assistantVersion,
    startDate: settings.startDate,
    endDate: settings.endDate,
    concurrency: settings.concurrency,
    counts,
    progress: counts.total ? counts.finished / counts.total : 0,
    waitingUntil: waitingUntil(row, now),
    createdAt: row.createdAt.toISOString(),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
  };
}

export async function getTaskSummary(
  db: Database,
  projectId: string,
  taskId: string,
  now: number,
): Promise<TaskSummary & { activeCalls: number }> {
  const row = await findTask(db, projectId, taskId);
  const counts = (await countsOf(db, [row.id])).get(row.id)!;
  return { ...toSummary(row, counts, now), activeCalls: counts.dialing };
}

export async function getTaskDetail(
  db: Database,
  projectId: string,
  taskId: string,
  now: number,
): Promise<TaskDetail> {
  const row = await findTask(db, projectId, taskId);
  const counts = (await countsOf(db, [row.id])).get(row.id)!;
  const settings = row.settings as TaskSettings;
  const [[live], [callStats], [rejected]] = await Promise.all([
    db
      .select({ n: count() })
      .from(calls)
      .where(and(eq(calls.taskId, row.id), inArray(calls.status, ['ringing', 'in_progress']))),
    db
      .select({
        ended: sql<number>`(count(*) filter (where ${calls.status} = 'ended'))::int`,
        answered: sql<number>`(count(*) filter (where ${calls.answeredAt} is not null))::int`,
        avgSeconds: sql<
          number | null
        >`avg(extract(epoch from ${calls.endedAt} - ${calls.startedAt}))::float8`,
      })
      .from(calls)
      .where(eq(calls.taskId, row.id)),
    db.select({ n: count() }).from(taskImportRejects).where(eq(taskImportRejects.taskId, row.id)),
  ]);
  const remaining = counts.waiting + counts.dialing;
  const average = callStats?.avgSeconds ?? AVERAGE_CALL_SECONDS;
  const live_ = ['running', 'pending', 'paused'].includes(row.state);
  return {
    ...toSummary(row, counts, now),
    settings,
    activeCalls: live?.n ?? 0,
    etaSeconds: live_ && remaining > 0 ? Math.ceil((remaining * average) / settings.concurrency) : null,
    answerRate: callStats?.ended ? callStats.answered / callStats.ended : null,
    importRejected: rejected?.n ?? 0,
  };
}

export type TaskListQuery = PageQuery & {
  name?: string;
  state?: TaskState;
  assistantId?: string;
  from?: string;
  to?: string;
};

export async function listTasks(db: Database, projectId: string, query: TaskListQuery, now: number) {
  const conditions: SQL[] = [eq(callTasks.projectId, projectId), isNull(callTasks.deletedAt)];
  if (query.name) conditions.push(ilike(callTasks.name, `%${query.name.replace(/[\\%_]/g, '\\$&')}%`));
  if (query.state) conditions.push(eq(callTasks.state, query.state));
  if (query.assistantId) conditions.push(eq(callTasks.assistantId, query.assistantId));
  if (query.from) conditions.push(gte(callTasks.createdAt, new Date(query.from)));
  if (query.to) conditions.push(lte(callTasks.createdAt, new Date(query.to)));
  const where = and(...conditions);
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(callTasks)
      .where(where)
      .orderBy(desc(callTasks.createdAt), desc(callTasks.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
    db.select({ n: count() }).from(callTasks).where(where),
  ]);
  const counts = await countsOf(
    db,
    rows.map((r) => r.id),
  );
  return {
    items: rows.map((r) => toSummary(r, counts.get(r.id)!, now)),
    total: total?.n ?? 0,
    page: query.page,
    pageSize: query.pageSize,
  };
}

/** Rejects settings the task cannot run with: 400 with the field and the rule. */
async function checkSettings(db: Database, projectId: string, settings: TaskSettings) {
  const [assistant] = await db
    .select({ id: assistants.id, name: assistants.name, publishedVersion: assistants.publishedVersion })
    .from(assistants)
    .where(
      and(
        eq(assistants.projectId, projectId),
        eq(assistants.id, settings.assistantId),
        isNull(assistants.deletedAt),
      ),
    )
    .limit(1);
  if (!assistant) throw badRequest('小助手不存在或已删除');
  if (!assistant.publishedVersion) throw badRequest('小助手尚未发布，请先发布后再用于呼出任务');
  if (settings.assistantVersion) {
    const version = await getPublishedVersion(db, projectId, settings.assistantId, settings.assistantVersion);
    if (!version) throw badRequest(`小助手版本 v${settings.assistantVersion} 不存在`);
  }
  if (settings.callerNumbers.length) {
    const enabled = new Set(
      (
        await db
          .select({ number: projectNumbers.number })
          .from(projectNumbers)
          .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.enabled, true)))
      ).map((r) => r.number),
    );
    const unknown = settings.callerNumbers.filter((n) => !enabled.has(n));
    if (unknown.length) throw badRequest(`外显号码 ${unknown.join('、')} 不是本项目已启用的号码`);
  }
  const limits = await getLimits(db, projectId);
  if (limits.hasBalance && settings.concurrency > limits.concurrentCallout) {
    throw badRequest(`并发数不能超过项目的呼出并发上限（${limits.concurrentCallout}）`);
  }
  return assistant;
}

const normalise = (settings: TaskSettings): TaskSettings => ({
  ...settings,
  callerNumbers: [...new Set(settings.callerNumbers)],
});

export async function createTask(
  db: Database,
  projectId: string,
  userId: string | null,
  input: TaskSettings,
  now: number,
): Promise<TaskDetail> {
  const settings = normalise(input);
  const assistant = await checkSettings(db, projectId, settings);
  const id = randomUUID();
  await db.insert(callTasks).values({
    id,
    projectId,
    name: settings.name,
    state: 'draft',
    assistantId: assistant.id,
    assistantName: assistant.name,
    settings,
    createdBy: userId,
    createdAt: new Date(now),
  });
  return getTaskDetail(db, projectId, id, now);
}

const EDITABLE: TaskState[] = ['draft', 'pending', 'paused'];

export async function updateTask(
  db: Database,
  projectId: string,
  taskId: string,
  input: TaskSettings,
  now: number,
): Promise<TaskDetail> {
  const row = await findTask(db, projectId, taskId);
  if (!EDITABLE.includes(row.state)) {
    throw conflict(
      `任务${TASK_STATE_LABELS[row.state]}，不能修改设置（仅草稿、待开始或已暂停的任务可以修改）`,
    );
  }
  const settings = normalise(input);
  const assistant = await checkSettings(db, projectId, settings);
  const changedAssistant = row.assistantId !== assistant.id;
  const moved = await db
    .update(callTasks)
    .set({
      name: settings.name,
      assistantId: assistant.id,
      assistantName: assistant.name,
      settings,
      // A started task keeps its frozen version unless the assistant or the version changes.
      ...(row.state !== 'draft' && (changedAssistant || settings.assistantVersion)
        ? { assistantVersion: settings.assistantVersion ?? assistant.publishedVersion }
        : {}),
    })
    .where(and(eq(callTasks.id, taskId), inArray(callTasks.state, EDITABLE)))
    .returning({ id: callTasks.id });
  if (!moved.length) throw conflict('任务状态已变化，请刷新后重试');
  return getTaskDetail(db, projectId, taskId, now);
}

export async function deleteTask(
  db: Database,
  projectId: string,
  taskId: string,
  now: number,
): Promise<void> {
  const row = await findTask(db, projectId, taskId);
  if (row.state !== 'draft') throw conflict(`任务${TASK_STATE_LABELS[row.state]}，只能删除草稿任务`);
  const deleted = await db
    .update(callTasks)
    .set({ deletedAt: new Date(now) })
    .where(and(eq(callTasks.id, taskId), eq(callTasks.state, 'draft')))
    .returning({ id: callTasks.id });
  if (!deleted.length) throw conflict('任务状态已变化，请刷新后重试');
}

/** A new draft with the same settings and contacts, every contact waiting for its first call. */
export async function copyTask(
  db: Database,
  projectId: string,
  taskId: string,
  userId: string | null,
  now: number,
): Promise<TaskDetail> {
  const row = await findTask(db, projectId, taskId);
  const settings = row.settings as TaskSettings;
  const id = randomUUID();
  const name = `${row.name.slice(0, 47)} 副本`;
  await db.transaction(async (tx) => {
    await tx.insert(callTasks).values({
      id,
      projectId,
      name,
      state: 'draft',
      assistantId: row.assistantId,
      assistantName: row.assistantName,
      settings: { ...settings, name },
      createdBy: userId,
      createdAt: new Date(now),
    });
    // One statement, so a task of 100,000 contacts copies without a round trip per row.
    await tx.execute(sql`
      insert into task_contacts (id, task_id, project_id, phone, name, variables, row_number, status, attempts)
      select ${id} || '-' || row_number, ${id}, project_id, phone, name, variables, row_number, 'pending', 0
      from task_contacts where task_id = ${taskId}`);
  });
  return getTaskDetail(db, projectId, id, now);
}

/** The moment `seconds` of calling-window time after `from` ends, or null past the end date. */
export function finishAfterWindowSeconds(
  calendar: CallingCalendar,
  from: number,
  seconds: number,
): number | null {
  let left = seconds * 1000;
  let at = nextCallingMoment(calendar, from);
  for (let guard = 0; at !== null && guard < 5000; guard++) {
    const date = chinaDate(at);
    const midnight = chinaMidnight(date);
    const window = windowsOn(calendar, date).find((w) => midnight + w.end * 60_000 > at!);
    if (!window) {
      at = nextCallingMoment(calendar, midnight + DAY_MS);
      continue;
    }
    const end = midnight + window.end * 60_000;
    if (end - at >= left) return at + left;
    left -= end - at;
    at = nextCallingMoment(calendar, end);
  }
  return null;
}

export async function preflightTask(
  db: Database,
  projectId: string,
  taskId: string,
  now: number,
): Promise<TaskPreflight> {
  const row = await findTask(db, projectId, taskId);
  const settings = row.settings as TaskSettings;
  const problems: string[] = [];
  const notes: string[] = [];
  const [open] = await db
    .select({ n: count() })
    .from(taskContacts)
    .where(and(eq(taskContacts.taskId, taskId), inArray(taskContacts.status, ['pending', 'retry'])));
  const contacts = open?.n ?? 0;
  if (contacts === 0) problems.push('没有待呼叫的联系人，请先导入号码');
  const maxAttempts = maxAttemptsOf(settings);
  const maxCalls = contacts * maxAttempts;
  const expectedCalls = Math.min(maxCalls, Math.round(contacts * (1 + UNREACHED_SHARE * (maxAttempts - 1))));
  const limits = await getLimits(db, projectId);
  const projectConcurrency = limits.hasBalance ? limits.concurrentCallout : null;
  const concurrency = Math.max(1, Math.min(settings.concurrency, projectConcurrency ?? settings.concurrency));
  const balanceOk = !(limits.hasBalance && limits.balanceFen <= 0);
  if (!balanceOk) problems.push('账户余额不足');
  if (projectConcurrency !== null && projectConcurrency <= 0) problems.push('项目未开通呼出并发，请联系销售');
  else if (projectConcurrency !== null && settings.concurrency > projectConcurrency) {
    problems.push(`并发数 ${settings.concurrency} 超过项目的呼出并发上限（${projectConcurrency}）`);
  }
  const version = row.assistantId
    ? await getPublishedVersion(
        db,
        projectId,
        row.assistantId,
        row.assistantVersion ?? settings.assistantVersion ?? undefined,
      )
    : null;
  if (!row.assistantId) problems.push('小助手已删除，请重新选择');
  else if (!version) problems.push('小助手尚未发布或版本不存在，请先发布');
  else if (version.status === 'disabled') problems.push('小助手已停用');
  if (settings.callerNumbers.length === 0) {
    notes.push(`未设置外显号码，将使用模拟线路的默认号码 ${SIM_CALLER_NUMBER}`);
  } else {
    const enabled = await db
      .select({ number: projectNumbers.number })
      .from(projectNumbers)
      .where(
        and(
          eq(projectNumbers.projectId, projectId),
          eq(projectNumbers.enabled, true),
          inArray(projectNumbers.number, settings.callerNumbers),
        ),
      );
    if (enabled.length === 0) problems.push('所选外显号码均已停用或删除');
  }
  if (chinaDate(now) > settings.endDate) problems.push('结束日期已过，请修改任务日期');
  const firstMoment = nextCallingMoment(settings, now);
  if (firstMoment === null && chinaDate(now) <= settings.endDate) {
    problems.push('开始与结束日期之间没有可呼叫的时段');
  }
  const expectedSeconds = Math.ceil((expectedCalls * AVERAGE_CALL_SECONDS) / concurrency);
  const finish = firstMoment === null ? null : finishAfterWindowSeconds(settings, now, expectedSeconds);
  return {
    contacts,
    maxCalls,
    expectedCalls,
    expectedSeconds,
    expectedFinishAt: finish === null ? null : new Date(finish).toISOString(),
    concurrency: settings.concurrency,
    projectConcurrency,
    balanceOk,
    problems,
    notes,
  };
}

const REFUSALS: Record<TaskAction, Partial<Record<TaskState, string>>> = {
  start: {
    pending: '任务已开始，等待开始日期',
    running: '任务已在进行中',
    paused: '任务已暂停，请使用继续',
    completed: '任务已完成，不能再次开始（可复制任务）',
    stopped: '任务已停止，不能再次开始（可复制任务）',
  },
  pause: {
    draft: '草稿任务尚未开始，不能暂停',
    pending: '任务尚未开始呼叫，不能暂停（可停止）',
    paused: '任务已暂停',
    completed: '任务已完成，不能暂停',
    stopped: '任务已停止，不能暂停',
  },
  resume: {
    draft: '草稿任务尚未开始，请使用开始',
    pending: '任务未暂停，无需继续',
    running: '任务正在进行中，无需继续',
    completed: '任务已完成，不能继续',
    stopped: '任务已停止，不能继续',
  },
  stop: {
    draft: '草稿任务不能停止，可直接删除',
    completed: '任务已完成，不能停止',
    stopped: '任务已停止',
  },
};

/** Moves a task through its state machine; 409 with the reason for an illegal transition. */
export async function actOnTask(
  db: Database,
  projectId: string,
  taskId: string,
  action: TaskAction,
  now: number,
): Promise<TaskDetail> {
  const row = await findTask(db, projectId, taskId);
  const refusal = REFUSALS[action][row.state];
  if (refusal) throw conflict(refusal);
  const settings = row.settings as TaskSettings;
  const at = new Date(now);
  let from: TaskState[];
  let set: Partial<typeof callTasks.$inferInsert>;
  switch (action) {
    case 'start': {
      const preflight = await preflightTask(db, projectId, taskId, now);
      if (preflight.problems.length) throw conflict(`无法开始：${preflight.problems.join('；')}`);
      const version =
        settings.assistantVersion ??
        (await getPublishedVersion(db, projectId, row.assistantId as string))?.version ??
        null;
      from = ['draft'];
      set = {
        state: chinaDate(now) < settings.startDate ? 'pending' : 'running',
        assistantVersion: version,
        startedAt: at,
      };
      break;
    }
    case 'pause':
      from = ['running'];
      set = { state: 'paused' };
      break;
    case 'resume':
      from = ['paused'];
      set = { state: chinaDate(now) < settings.startDate ? 'pending' : 'running' };
      break;
    case 'stop':
      from = ['running', 'paused', 'pending'];
      set = { state: 'stopped', finishedAt: at };
      break;
  }
  const moved = await db
    .update(callTasks)
    .set(set)
    .where(and(eq(callTasks.id, taskId), inArray(callTasks.state, from)))
    .returning({ id: callTasks.id });
  if (!moved.length) throw conflict('任务状态已变化，请刷新后重试');
  await publishTaskStateChange(db, projectId, taskId, { from: row.state, to: set.state as TaskState }, at);
  return getTaskDetail(db, projectId, taskId, now);
}

export type ContactListQuery = PageQuery & { status?: ContactStatus; phone?: string };

export async function listContacts(db: Database, projectId: string, taskId: string, query: ContactListQuery) {
  await findTask(db, projectId, taskId);
  const conditions: SQL[] = [eq(taskContacts.taskId, taskId)];
  if (query.status) conditions.push(eq(taskContacts.status, query.status));
  if (query.phone) conditions.push(ilike(taskContacts.phone, `%${query.phone.replace(/[\\%_]/g, '\\$&')}%`));
  const where = and(...conditions);
  const [rows, [total]] = await Promise.all([
    db
      .select({ contact: taskContacts, grade: calls.intentGrade })
      .from(taskContacts)
      .leftJoin(calls, eq(calls.id, taskContacts.lastCallId))
      .where(where)
      .orderBy(asc(taskContacts.rowNumber), asc(taskContacts.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
    db.select({ n: count() }).from(taskContacts).where(where),
  ]);
  const items: TaskContact[] = rows.map(({ contact, grade }) => ({
    id: contact.id,
    phone: contact.phone,
    name: contact.name,
    variables: (contact.variables as Record<string, string>) ?? {},
    status: contact.status,
    attempts: contact.attempts,
    nextAttemptAt: iso(contact.nextAttemptAt),
    lastEndReason: (contact.lastEndReason as EndReason | null) ?? null,
    lastCallId: contact.lastCallId,
    skipReason: contact.skipReason,
    intentGrade: grade ?? null,
  }));
  return { items, total: total?.n ?? 0, page: query.page, pageSize: query.pageSize };
}
