import type {
  CallDetail,
  CallFilters,
  CallListQuery,
  CallSummary,
  CallTurn,
  FlowStep,
  IntentGrade,
  SimPersona,
} from '@callpilot/contracts';
import { and, asc, desc, eq, gt, gte, ilike, inArray, isNull, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { calls, callTurns, users } from '../../db/schema';
import { notFound } from '../../lib/errors';

export type CallRow = typeof calls.$inferSelect;
type TurnRow = typeof callTurns.$inferSelect;

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export function toSummary(row: CallRow): CallSummary {
  return {
    id: row.id,
    direction: row.direction,
    callerNumber: row.callerNumber,
    calleeNumber: row.calleeNumber,
    taskId: row.taskId,
    taskName: row.taskName,
    contactId: row.contactId,
    contactName: row.contactName,
    assistantId: row.assistantId,
    assistantName: row.assistantName,
    assistantVersion: row.assistantVersion,
    status: row.status,
    endReason: row.endReason,
    hangupBy: row.hangupBy,
    startedAt: row.startedAt.toISOString(),
    answeredAt: iso(row.answeredAt),
    endedAt: iso(row.endedAt),
    talkSeconds: row.talkSeconds,
    turnCount: row.turnCount,
    intentGrade: row.intentGrade,
    machineGrade: row.machineGrade,
    humanGrade: row.humanGrade,
    tags: row.tags,
    summary: row.summary,
    recording: row.recording,
    persona: (row.persona as SimPersona | null) ?? null,
  };
}

export function toTurn(row: TurnRow): CallTurn {
  return {
    index: row.index,
    speaker: row.speaker,
    text: row.text,
    dtmf: row.dtmf,
    startMs: row.startMs,
    endMs: row.endMs,
    interrupted: row.interrupted,
    latency: (row.latency as CallTurn['latency']) ?? null,
    segments: (row.segments as CallTurn['segments']) ?? [],
  };
}

/** `%` and `_` in a number are literal, not LIKE wildcards. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

const yes = (value: 'yes' | 'no', condition: SQL) => (value === 'yes' ? condition : sql`not (${condition})`);

/**
 * Metric definitions shared by the list filters and the report rollups (modules/reports/rollup.ts),
 * so a report's drill-down lists exactly the calls it counted.
 */
/** Seconds from start to answer, rounded; null when nobody answered (a null never matches a bound). */
export const waitSecondsSql = sql`round(extract(epoch from (${calls.answeredAt} - ${calls.startedAt})))::int`;
/**
 * An assistant talked (小助手接待): answered, and either a call answered by an assistant with at
 * least one turn, or a flow call that reached an assistant node. A flow call keeps assistant_id
 * null (its own prompts are 'assistant' turns too), so its path is what tells.
 */
/** `flowId=none`: the calls no flow answered (the inbound report's 无通话流程 row). */
export const NO_FLOW_FILTER = 'none';

export const assistantTalkedSql = sql`(${calls.answeredAt} is not null and ((${calls.assistantId} is not null and ${calls.turnCount} > 0) or ${calls.flowPath} @> '[{"nodeType":"assistant"}]'::jsonb))`;
/** The project's number on the call: the caller number outbound, the number dialled inbound. */
export const lineNumberSql = sql`(case when ${calls.direction} = 'outbound' then ${calls.callerNumber} else ${calls.calleeNumber} end)`;
const lineNumberIs = (number: string) =>
  or(
    and(eq(calls.direction, 'outbound'), eq(calls.callerNumber, number)),
    and(eq(calls.direction, 'inbound'), eq(calls.calleeNumber, number)),
  ) as SQL;

/** The WHERE of the list, the export and previous/next: one definition, so they always agree. */
export function callFilterWhere(projectId: string, f: Partial<CallFilters>): SQL {
  const where: (SQL | undefined)[] = [eq(calls.projectId, projectId)];
  if (f.from) where.push(gte(calls.startedAt, new Date(f.from)));
  if (f.to) where.push(lte(calls.startedAt, new Date(f.to)));
  if (f.direction) where.push(eq(calls.direction, f.direction));
  if (f.endReason?.length) where.push(inArray(calls.endReason, f.endReason));
  if (f.intentGrade?.length) {
    const grades = f.intentGrade.filter((g): g is IntentGrade => g !== 'none');
    const parts: SQL[] = [];
    if (grades.length) parts.push(inArray(calls.intentGrade, grades));
    if (f.intentGrade.includes('none')) parts.push(isNull(calls.intentGrade));
    where.push(parts.length === 1 ? parts[0] : or(...parts));
  }
  if (f.taskId) where.push(eq(calls.taskId, f.taskId));
  if (f.assistantId) where.push(eq(calls.assistantId, f.assistantId));
  if (f.number) {
    const pattern = `%${likeLiteral(f.number)}%`;
    where.push(or(ilike(calls.calleeNumber, pattern), ilike(calls.callerNumber, pattern)));
  }
  if (f.talkMin !== undefined) where.push(gte(calls.talkSeconds, f.talkMin));
  if (f.talkMax !== undefined) where.push(lte(calls.talkSeconds, f.talkMax));
  if (f.tags?.length) where.push(sql`${calls.tags} && ${sql.param(f.tags)}::text[]`);
  if (f.status) where.push(eq(calls.status, f.status));
  if (f.flowId === NO_FLOW_FILTER) where.push(isNull(calls.flowId));
  else if (f.flowId) where.push(eq(calls.flowId, f.flowId));
  // A step of the flow itself: subflow steps carry their flowId and may reuse node ids.
  if (f.flowNodeId)
    where.push(sql`exists (select 1 from jsonb_array_elements(
      case when jsonb_typeof(${calls.flowPath}) = 'array' then ${calls.flowPath} else '[]'::jsonb end) step
      where step->>'nodeId' = ${f.flowNodeId} and coalesce(step->>'flowId', '') = '')`);
  if (f.turnsMin !== undefined) where.push(gte(calls.turnCount, f.turnsMin));
  if (f.turnsMax !== undefined) where.push(lte(calls.turnCount, f.turnsMax));
  // The rollups count a call without a version as version 0 (draft test calls): the same here.
  if (f.assistantVersion !== undefined)
    where.push(sql`coalesce(${calls.assistantVersion}, 0) = ${f.assistantVersion}`);
  if (f.hangupBy) where.push(eq(calls.hangupBy, f.hangupBy));
  if (f.lineNumber) where.push(lineNumberIs(f.lineNumber));
  if (f.answered) where.push(yes(f.answered, sql`${calls.answeredAt} is not null`));
  if (f.assistantTalked) where.push(yes(f.assistantTalked, assistantTalkedSql));
  if (f.transferred) where.push(yes(f.transferred, sql`${calls.transferredAt} is not null`));
  if (f.humanGraded) where.push(yes(f.humanGraded, sql`${calls.humanGrade} is not null`));
  if (f.waitMin !== undefined) where.push(sql`${waitSecondsSql} >= ${f.waitMin}`);
  if (f.waitMax !== undefined) where.push(sql`${waitSecondsSql} <= ${f.waitMax}`);
  return and(...where) as SQL;
}

const sortColumn = (f: Partial<CallFilters>) =>
  f.sort === 'talkSeconds' ? calls.talkSeconds : f.sort === 'turnCount' ? calls.turnCount : calls.startedAt;

/** The list's order, with the id as tie-breaker so pages and previous/next are stable. */
export function callOrder(f: Partial<CallFilters>): SQL[] {
  const dir = f.order === 'asc' ? asc : desc;
  return [dir(sortColumn(f)), dir(calls.id)];
}

export async function listCalls(
  db: Database,
  projectId: string,
  query: CallListQuery,
): Promise<{ items: CallSummary[]; total: number; page: number; pageSize: number }> {
  const where = callFilterWhere(projectId, query);
  const [rows, [count]] = await Promise.all([
    db
      .select()
      .from(calls)
      .where(where)
      .orderBy(...callOrder(query))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
    db.select({ total: sql<number>`count(*)::int` }).from(calls).where(where),
  ]);
  return { items: rows.map(toSummary), total: count?.total ?? 0, page: query.page, pageSize: query.pageSize };
}

export async function findCall(db: Database, projectId: string, callId: string): Promise<CallRow> {
  const [row] = await db
    .select()
    .from(calls)
    .where(and(eq(calls.projectId, projectId), eq(calls.id, callId)))
    .limit(1);
  if (!row) throw notFound('通话记录不存在');
  return row;
}

export async function getCallDetail(db: Database, projectId: string, callId: string): Promise<CallDetail> {
  const row = await findCall(db, projectId, callId);
  const [turnRows, grader] = await Promise.all([
    db.select().from(callTurns).where(eq(callTurns.callId, callId)).orderBy(asc(callTurns.index)),
    row.humanGradedBy
      ? db
          .select({ name: users.displayName, email: users.email })
          .from(users)
          .where(eq(users.id, row.humanGradedBy))
          .limit(1)
      : Promise.resolve([]),
  ]);
  const who = grader[0];
  return {
    ...toSummary(row),
    turns: turnRows.map(toTurn),
    analysisBy: row.analysisBy,
    gradeReason: row.gradeReason,
    fields: (row.fields as Record<string, string>) ?? {},
    humanGradedBy: who ? who.name || who.email : row.humanGradedBy ? '已删除的用户' : null,
    humanGradedAt: iso(row.humanGradedAt),
    transferNumber: row.transferNumber,
    transferredAt: iso(row.transferredAt),
    variables: (row.variables as Record<string, string>) ?? {},
    recordingDurationMs: row.recordingDurationMs,
    recordingError: row.recording === 'failed' ? row.recordingError : null,
    flow: row.flowName
      ? {
          flowId: row.flowId,
          flowName: row.flowName,
          flowVersion: row.flowVersion,
          steps: (row.flowPath as FlowStep[]) ?? [],
        }
      : null,
  };
}

type SortValue = Date | number;
const sortValue = (
  f: Partial<CallFilters>,
  row: Pick<CallRow, 'startedAt' | 'talkSeconds' | 'turnCount'>,
): SortValue =>
  f.sort === 'talkSeconds' ? row.talkSeconds : f.sort === 'turnCount' ? row.turnCount : row.startedAt;

/**
 * Rows strictly after (`forward`) or before a row in the list's order: keyset pagination for the
 * export and previous/next, stable on ties through the id.
 */
export function beyond(
  f: Partial<CallFilters>,
  key: { value: SortValue; id: string },
  forward: boolean,
): SQL {
  const column = sortColumn(f);
  // Forward in a descending list means smaller values.
  const smaller = (f.order !== 'asc') === forward;
  const v = key.value as never;
  return and(
    // A plain bound the index can start from: without it every batch re-reads the rows already sent.
    smaller ? lte(column, v) : gte(column, v),
    or(
      smaller ? lt(column, v) : gt(column, v),
      and(eq(column, v), smaller ? lt(calls.id, key.id) : gt(calls.id, key.id)),
    ),
  ) as SQL;
}

/** The calls just before and after `callId` in the filtered, sorted list (上一条 / 下一条). */
export async function callNeighbors(
  db: Database,
  projectId: string,
  callId: string,
  f: Partial<CallFilters>,
): Promise<{ previousId: string | null; nextId: string | null }> {
  const row = await findCall(db, projectId, callId);
  const key = { value: sortValue(f, row), id: row.id };
  const where = callFilterWhere(projectId, f);
  const reversed = callOrder({ ...f, order: f.order === 'asc' ? 'desc' : 'asc' });
  const [[prev], [next]] = await Promise.all([
    db
      .select({ id: calls.id })
      .from(calls)
      .where(and(where, beyond(f, key, false)))
      .orderBy(...reversed)
      .limit(1),
    db
      .select({ id: calls.id })
      .from(calls)
      .where(and(where, beyond(f, key, true)))
      .orderBy(...callOrder(f))
      .limit(1),
  ]);
  return { previousId: prev?.id ?? null, nextId: next?.id ?? null };
}

/** Every row of the filtered list in order, a batch at a time, never the whole set in memory. */
export async function* iterateCalls(
  db: Database,
  projectId: string,
  f: Partial<CallFilters>,
  batchSize = 1000,
): AsyncGenerator<CallRow[]> {
  const where = callFilterWhere(projectId, f);
  let key: { value: SortValue; id: string } | null = null;
  for (;;) {
    const rows: CallRow[] = await db
      .select()
      .from(calls)
      .where(key ? and(where, beyond(f, key, true)) : where)
      .orderBy(...callOrder(f))
      .limit(batchSize);
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < batchSize) return;
    const last = rows[rows.length - 1] as CallRow;
    key = { value: sortValue(f, last), id: last.id };
  }
}

/** A human grade beside the machine's; null clears it so the machine's counts again. */
export async function listTags(db: Database, projectId: string): Promise<string[]> {
  const rows = await db.execute<{ tag: string }>(
    sql`select distinct unnest(${calls.tags}) as tag from ${calls} where ${calls.projectId} = ${projectId} order by 1 limit 200`,
  );
  return rowsOf<{ tag: string }>(rows).map((r) => r.tag);
}

/** PGlite answers `execute` with { rows }, node-postgres with a QueryResult: both have rows. */
export const rowsOf = <T>(result: unknown): T[] => (result as { rows: T[] }).rows;
