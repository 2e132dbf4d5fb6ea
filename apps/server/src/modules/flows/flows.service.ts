import { randomUUID } from 'node:crypto';
import {
  FLOW_EXPORT_FORMAT,
  type FlowDetail,
  type FlowDraftSaved,
  type FlowExport,
  type FlowGraph,
  type FlowIssue,
  type FlowListQuery,
  type FlowNodeStats,
  type FlowOption,
  type FlowStatus,
  type FlowSummary,
  type FlowVersionSummary,
  flowGraph,
  type Paged,
  validateFlow,
} from '@callpilot/contracts';
import { and, asc, count, desc, eq, ilike, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Database } from '../../db/client';
import { callFlows, callFlowVersions, calls, projectNumbers, users } from '../../db/schema';
import { AppError, badRequest, conflict, notFound } from '../../lib/errors';
import { rowsOf } from '../calls/calls.service';
import { referenceIssues } from './flow-references';

/** The member who submitted a reviewed version, next to its approver in one query. */
const submitters = alias(users, 'submitters');

/**
 * 通话流程: drafts the editor saves, versions publishing freezes, and what the list, the canvas
 * statistics and the number binding read. Calls keep the version they started with (the versions
 * table) and a snapshot of the flow's name (calls.flow_name), so a flow can go without them.
 */

type FlowRow = typeof callFlows.$inferSelect;

const NAME_MAX = 40;
const COPY_SUFFIX = ' 副本';
const DAY_MS = 86_400_000;
export const STATS_DEFAULT_DAYS = 7;
export const STATS_MAX_DAYS = 93;

const missing = () => notFound('流程不存在或已删除');
const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
/** Graphs written by an older contract still read as complete ones (defaults fill the gaps). */
const readGraph = (stored: unknown): FlowGraph => flowGraph.parse(stored);

/** A new flow's draft: a lone 开始 node, for the editor to build from. */
export const newFlowGraph = (): FlowGraph =>
  flowGraph.parse({ nodes: [{ id: 'start', type: 'start', position: { x: 0, y: 0 } }], edges: [] });

/** Key order does not make two graphs different (jsonb reorders keys, clients may too). */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
export const sameGraph = (a: FlowGraph, b: FlowGraph) => canonical(a) === canonical(b);

const statusOf = (row: { publishedVersion: number | null; draftChanged: boolean }): FlowStatus =>
  row.publishedVersion === null ? 'draft' : row.draftChanged ? 'changed' : 'published';

/**
 * Numbers answering with the flow and its calls of the last 7 days, computed beside each row. The
 * outer row is named in full: drizzle leaves columns of a one-table select unqualified, and an
 * unqualified name inside a subquery means the subquery's own table.
 */
const summaryColumns = (since: Date) => ({
  id: callFlows.id,
  name: callFlows.name,
  description: callFlows.description,
  publishedVersion: callFlows.publishedVersion,
  draftChanged: callFlows.draftChanged,
  createdAt: callFlows.createdAt,
  updatedAt: callFlows.updatedAt,
  nodeCount: sql<number>`coalesce(jsonb_array_length(${callFlows.draft}->'nodes'), 0)::int`,
  numbers: sql<string[] | null>`(select array_agg(pn.number order by pn.number) from ${projectNumbers} pn
    where pn.project_id = call_flows.project_id and pn.inbound_flow_id = call_flows.id)`,
  // Test calls (the draft, flow_version null) are not the flow's traffic.
  calls7d: sql<number>`(select count(*)::int from ${calls} c where c.project_id = call_flows.project_id
    and c.flow_id = call_flows.id and c.flow_version is not null
    and c.started_at >= ${since.toISOString()}::timestamptz)`,
});

type SummaryRow = {
  id: string;
  name: string;
  description: string;
  publishedVersion: number | null;
  draftChanged: boolean;
  createdAt: Date;
  updatedAt: Date;
  nodeCount: number;
  numbers: string[] | null;
  calls7d: number;
};

const toSummary = (row: SummaryRow): FlowSummary => ({
  id: row.id,
  name: row.name,
  description: row.description,
  status: statusOf(row),
  publishedVersion: row.publishedVersion,
  numbers: row.numbers ?? [],
  calls7d: Number(row.calls7d),
  nodeCount: Number(row.nodeCount),
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const ofProject = (projectId: string, flowId: string) =>
  and(eq(callFlows.projectId, projectId), eq(callFlows.id, flowId));

async function findFlow(db: Database, projectId: string, flowId: string): Promise<FlowRow> {
  const [row] = await db.select().from(callFlows).where(ofProject(projectId, flowId)).limit(1);
  if (!row) throw missing();
  return row;
}

/** A published version's graph, or null when the flow has no such version. */
async function versionGraph(db: Database, flowId: string, version: number): Promise<FlowGraph | null> {
  const [row] = await db
    .select({ graph: callFlowVersions.graph })
    .from(callFlowVersions)
    .where(and(eq(callFlowVersions.flowId, flowId), eq(callFlowVersions.version, version)))
    .limit(1);
  return row ? readGraph(row.graph) : null;
}

/** Everything wrong with a graph: the shared rules and this project's references. */
export async function flowIssues(
  db: Database,
  projectId: string,
  flowId: string | null,
  graph: FlowGraph,
): Promise<FlowIssue[]> {
  return [
    ...validateFlow(graph, flowId ? { flowId } : {}),
    ...(await referenceIssues(db, projectId, flowId, graph)),
  ];
}

/** Where a problem of a graph is reported: a request field (draft save) or a place in an import file. */
type Place = (path: string, rule: string) => string;
const requestField: Place = (path, rule) => `字段 ${path}：${rule}`;
export const importFilePlace: Place = (path, rule) => `导入文件格式不正确：${path} ${rule}`;

/** Node and edge ids the canvas and the path records key on: a duplicate would merge two nodes. */
export function assertUniqueIds(graph: FlowGraph, place: Place = requestField): void {
  const refuse = (path: string, rule: string) => new AppError(400, 'VALIDATION_FAILED', place(path, rule));
  const nodes = new Set<string>();
  graph.nodes.forEach((node, i) => {
    if (nodes.has(node.id)) throw refuse(`graph.nodes.${i}.id`, `节点标识 ${node.id} 重复`);
    nodes.add(node.id);
  });
  const edges = new Set<string>();
  graph.edges.forEach((edge, i) => {
    if (edges.has(edge.id)) throw refuse(`graph.edges.${i}.id`, `连线标识 ${edge.id} 重复`);
    edges.add(edge.id);
  });
}

export async function listFlows(
  db: Database,
  projectId: string,
  query: FlowListQuery,
  now = new Date(),
): Promise<Paged<FlowSummary>> {
  const keyword = query.keyword?.trim();
  const where = and(
    eq(callFlows.projectId, projectId),
    keyword ? ilike(callFlows.name, `%${escapeLike(keyword)}%`) : undefined,
  );
  const [total] = await db.select({ n: count() }).from(callFlows).where(where);
  const rows = await db
    .select(summaryColumns(new Date(now.getTime() - STATS_DEFAULT_DAYS * DAY_MS)))
    .from(callFlows)
    .where(where)
    .orderBy(desc(callFlows.updatedAt), desc(callFlows.id))
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize);
  return { items: rows.map(toSummary), total: total?.n ?? 0, page: query.page, pageSize: query.pageSize };
}

/** Every flow by name, for pickers (subflow nodes, the inbound binding of numbers). */
export async function flowOptions(db: Database, projectId: string): Promise<FlowOption[]> {
  return db
    .select({ id: callFlows.id, name: callFlows.name, publishedVersion: callFlows.publishedVersion })
    .from(callFlows)
    .where(eq(callFlows.projectId, projectId))
    .orderBy(asc(callFlows.name), asc(callFlows.id));
}

export async function getFlow(
  db: Database,
  projectId: string,
  flowId: string,
  now = new Date(),
): Promise<FlowDetail> {
  const [row] = await db
    .select({
      ...summaryColumns(new Date(now.getTime() - STATS_DEFAULT_DAYS * DAY_MS)),
      draft: callFlows.draft,
    })
    .from(callFlows)
    .where(ofProject(projectId, flowId))
    .limit(1);
  if (!row) throw missing();
  const draft = readGraph(row.draft);
  const published =
    row.publishedVersion === null ? null : await versionGraph(db, flowId, row.publishedVersion);
  return {
    ...toSummary(row),
    draft,
    published,
    issues: await flowIssues(db, projectId, flowId, draft),
  };
}

async function insertFlow(
  db: Database,
  projectId: string,
  userId: string | null,
  input: { name: string; description: string; draft: FlowGraph },
): Promise<string> {
  const id = randomUUID();
  await db.insert(callFlows).values({
    id,
    projectId,
    name: input.name,
    description: input.description,
    draft: input.draft,
    publishedVersion: null,
    draftChanged: true,
    createdBy: userId,
  });
  return id;
}

export async function createFlow(
  db: Database,
  projectId: string,
  userId: string | null,
  input: { name: string; description: string },
): Promise<FlowDetail> {
  const id = await insertFlow(db, projectId, userId, { ...input, draft: newFlowGraph() });
  return getFlow(db, projectId, id);
}

/** Saving is lenient (a half-built flow saves); the answer says what publishing would refuse. */
export async function saveDraft(
  db: Database,
  projectId: string,
  flowId: string,
  input: { name?: string; description?: string; graph: FlowGraph },
): Promise<FlowDraftSaved> {
  assertUniqueIds(input.graph);
  const flow = await findFlow(db, projectId, flowId);
  const live = flow.publishedVersion === null ? null : await versionGraph(db, flowId, flow.publishedVersion);
  const updatedAt = new Date();
  await db
    .update(callFlows)
    .set({
      name: input.name ?? flow.name,
      description: input.description ?? flow.description,
      draft: input.graph,
      draftChanged: live === null || !sameGraph(live, input.graph),
      updatedAt,
    })
    .where(ofProject(projectId, flowId));
  return {
    updatedAt: updatedAt.toISOString(),
    issues: await flowIssues(db, projectId, flowId, input.graph),
  };
}

/** Freezes the draft as version N+1, which inbound calls then run; a flow with errors is refused. */
export async function publishFlow(
  db: Database,
  projectId: string,
  flowId: string,
  userId: string | null,
  note: string,
): Promise<FlowDetail> {
  await db.transaction((tx) => freezeFlow(tx, projectId, flowId, userId, note));
  return getFlow(db, projectId, flowId);
}

/** The draft as it is now, checked as publishing checks it: what 发布审核 freezes at submission. */
export async function snapshotFlowDraft(
  db: Database,
  projectId: string,
  flowId: string,
): Promise<{ name: string; graph: FlowGraph }> {
  const flow = await findFlow(db, projectId, flowId);
  const graph = readGraph(flow.draft);
  await assertPublishable(db, projectId, flowId, graph);
  return { name: flow.name, graph };
}

/** The live version's graph and number, the left side of a review's diff. */
export async function liveFlowVersion(
  db: Database,
  projectId: string,
  flowId: string,
): Promise<{ version: number; graph: FlowGraph } | null> {
  const flow = await findFlow(db, projectId, flowId);
  if (!flow.publishedVersion) return null;
  const graph = await versionGraph(db, flowId, flow.publishedVersion);
  return graph ? { version: flow.publishedVersion, graph } : null;
}

/**
 * Approving a review: publishes the submitted graph (the draft may have moved on and stays as it
 * is). Runs inside the caller's transaction.
 */
export async function publishFlowSnapshot(
  tx: Database,
  projectId: string,
  flowId: string,
  graph: FlowGraph,
  review: { approvedBy: string; submittedBy: string | null; reviewId: string; note: string },
): Promise<number> {
  return freezeFlow(tx, projectId, flowId, review.approvedBy, review.note, {
    graph,
    submittedBy: review.submittedBy,
    reviewId: review.reviewId,
  });
}

async function assertPublishable(db: Database, projectId: string, flowId: string, graph: FlowGraph) {
  const errors = (await flowIssues(db, projectId, flowId, graph)).filter((i) => i.severity === 'error');
  if (errors.length > 0)
    throw badRequest(`流程有 ${errors.length} 个错误，修正后才能发布：${errors[0]!.message}`);
}

async function freezeFlow(
  tx: Database,
  projectId: string,
  flowId: string,
  userId: string | null,
  note: string,
  reviewed?: { graph: FlowGraph; submittedBy: string | null; reviewId: string },
): Promise<number> {
  // The row lock serialises two publishes of one flow (version numbers never collide) and
  // keeps a concurrent save from slipping in between the check and the freeze.
  const [flow] = await tx.select().from(callFlows).where(ofProject(projectId, flowId)).for('update');
  if (!flow) throw missing();
  const graph = reviewed?.graph ?? readGraph(flow.draft);
  await assertPublishable(tx, projectId, flowId, graph);
  const [latest] = await tx
    .select({ max: sql<number | null>`max(${callFlowVersions.version})` })
    .from(callFlowVersions)
    .where(eq(callFlowVersions.flowId, flowId));
  const version = Number(latest?.max ?? 0) + 1;
  await tx.insert(callFlowVersions).values({
    flowId,
    version,
    graph,
    note,
    publishedBy: userId,
    submittedBy: reviewed?.submittedBy ?? null,
    reviewId: reviewed?.reviewId ?? null,
  });
  await tx
    .update(callFlows)
    // After a reviewed publish the draft may hold later edits: it then still counts as changed.
    .set({
      publishedVersion: version,
      draftChanged: reviewed ? !sameGraph(readGraph(flow.draft), graph) : false,
      updatedAt: new Date(),
    })
    .where(eq(callFlows.id, flowId));
  return version;
}

export async function listFlowVersions(
  db: Database,
  projectId: string,
  flowId: string,
): Promise<FlowVersionSummary[]> {
  const flow = await findFlow(db, projectId, flowId);
  const rows = await db
    .select({
      version: callFlowVersions.version,
      note: callFlowVersions.note,
      publishedAt: callFlowVersions.publishedAt,
      publishedByName: users.displayName,
      submittedByName: submitters.displayName,
    })
    .from(callFlowVersions)
    .leftJoin(users, eq(users.id, callFlowVersions.publishedBy))
    .leftJoin(submitters, eq(submitters.id, callFlowVersions.submittedBy))
    .where(eq(callFlowVersions.flowId, flowId))
    .orderBy(desc(callFlowVersions.version));
  return rows.map((row) => ({
    version: row.version,
    note: row.note,
    publishedAt: row.publishedAt.toISOString(),
    publishedByName: row.publishedByName,
    submittedByName: row.submittedByName,
    live: row.version === flow.publishedVersion,
  }));
}

export async function getFlowVersion(
  db: Database,
  projectId: string,
  flowId: string,
  version: number,
): Promise<FlowGraph> {
  await findFlow(db, projectId, flowId);
  const graph = await versionGraph(db, flowId, version);
  if (!graph) throw notFound(`版本 v${version} 不存在`);
  return graph;
}

/**
 * Puts an earlier version back live, as it was frozen (no new version: the list shows which one
 * runs), and makes it the draft. Refused when what it calls has gone meanwhile.
 */
export async function rollbackFlow(
  db: Database,
  projectId: string,
  flowId: string,
  version: number,
): Promise<FlowDetail> {
  await findFlow(db, projectId, flowId);
  const graph = await versionGraph(db, flowId, version);
  if (!graph) throw notFound(`版本 v${version} 不存在`);
  const broken = (await referenceIssues(db, projectId, flowId, graph)).find((i) => i.severity === 'error');
  if (broken) throw badRequest(`版本 v${version} 无法恢复：${broken.message}`);
  await db
    .update(callFlows)
    .set({ publishedVersion: version, draft: graph, draftChanged: false, updatedAt: new Date() })
    .where(ofProject(projectId, flowId));
  return getFlow(db, projectId, flowId);
}

export async function copyFlow(
  db: Database,
  projectId: string,
  flowId: string,
  userId: string | null,
): Promise<FlowDetail> {
  const source = await findFlow(db, projectId, flowId);
  const id = await insertFlow(db, projectId, userId, {
    name: `${source.name.slice(0, NAME_MAX - COPY_SUFFIX.length)}${COPY_SUFFIX}`,
    description: source.description,
    draft: readGraph(source.draft),
  });
  return getFlow(db, projectId, id);
}

/** The project's other flows whose live version calls `flowId` as a subflow. */
async function liveCallersOf(db: Database, projectId: string, flowId: string): Promise<string[]> {
  const probe = JSON.stringify([{ type: 'subflow', data: { flowId } }]);
  const rows = await db
    .select({ name: callFlows.name })
    .from(callFlows)
    .innerJoin(
      callFlowVersions,
      and(
        eq(callFlowVersions.flowId, callFlows.id),
        eq(callFlowVersions.version, callFlows.publishedVersion),
      ),
    )
    .where(
      and(
        eq(callFlows.projectId, projectId),
        sql`${callFlows.id} <> ${flowId}`,
        sql`${callFlowVersions.graph}->'nodes' @> ${probe}::jsonb`,
      ),
    )
    .orderBy(asc(callFlows.name));
  return rows.map((r) => r.name);
}

async function boundNumbers(db: Database, projectId: string, flowId: string): Promise<string[]> {
  const rows = await db
    .select({ number: projectNumbers.number })
    .from(projectNumbers)
    .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.inboundFlowId, flowId)))
    .orderBy(asc(projectNumbers.number));
  return rows.map((r) => r.number);
}

const boundMessage = (numbers: string[]) =>
  `流程正在接听号码 ${numbers.join('、')} 的来电，请先在号码管理中解绑`;

/** Refused while calls could still reach the flow; its versions go with it, call records stay. */
export async function deleteFlow(db: Database, projectId: string, flowId: string): Promise<void> {
  await findFlow(db, projectId, flowId);
  const numbers = await boundNumbers(db, projectId, flowId);
  if (numbers.length > 0) throw conflict(boundMessage(numbers));
  const callers = await liveCallersOf(db, projectId, flowId);
  if (callers.length > 0)
    throw conflict(`流程正被「${callers.join('」「')}」的已发布版本用作子流程，请先在该流程中移除并重新发布`);
  try {
    await db.delete(callFlows).where(ofProject(projectId, flowId));
  } catch (err) {
    // A number bound in between: the (project, flow) reference refuses the delete.
    if ((err as { code?: string }).code === '23503' || /foreign key/i.test(String(err)))
      throw conflict(boundMessage(await boundNumbers(db, projectId, flowId)));
    throw err;
  }
}

export async function exportFlow(db: Database, projectId: string, flowId: string): Promise<FlowExport> {
  const flow = await findFlow(db, projectId, flowId);
  return {
    format: FLOW_EXPORT_FORMAT,
    version: 1,
    name: flow.name,
    description: flow.description,
    graph: readGraph(flow.draft),
  };
}

/**
 * A new draft flow from an export file (parsed by the route). Ids of flows, assistants and audio
 * of another project are kept: validation reports them on their nodes for the user to replace.
 */
export async function importFlow(
  db: Database,
  projectId: string,
  userId: string | null,
  file: FlowExport,
): Promise<FlowDetail> {
  assertUniqueIds(file.graph, importFilePlace);
  const id = await insertFlow(db, projectId, userId, {
    name: file.name,
    description: file.description,
    draft: file.graph,
  });
  return getFlow(db, projectId, id);
}

/** The date range of the statistics: [from, to), the last 7 days unless given, at most 93 days. */
export function statsRange(
  query: { from?: string; to?: string },
  now = new Date(),
): { from: Date; to: Date } {
  const to = query.to ? new Date(query.to) : now;
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - STATS_DEFAULT_DAYS * DAY_MS);
  if (from.getTime() >= to.getTime()) throw badRequest('字段 from：开始时间须早于结束时间');
  if (to.getTime() - from.getTime() > STATS_MAX_DAYS * DAY_MS)
    throw badRequest(`字段 from：统计区间不能超过 ${STATS_MAX_DAYS} 天`);
  return { from, to };
}

/**
 * The funnel on the canvas: per node, the calls that entered it and the calls whose caller hung
 * up there (their last step of the flow itself, a subflow's own steps aside). Published-version
 * calls only; a 模拟来电 of the draft is not traffic.
 */
export async function flowStats(
  db: Database,
  projectId: string,
  flowId: string,
  range: { from: Date; to: Date },
): Promise<FlowNodeStats> {
  const flow = await findFlow(db, projectId, flowId);
  const from = range.from.toISOString();
  const to = range.to.toISOString();
  const result = await db.execute(sql`
    with flow_calls as (
      select c.id, c.hangup_by, c.flow_path
      from ${calls} c
      where c.project_id = ${projectId} and c.flow_id = ${flowId} and c.flow_version is not null
        and c.started_at >= ${from}::timestamptz and c.started_at < ${to}::timestamptz
    ),
    own_steps as (
      select fc.id as call_id, fc.hangup_by, step.value->>'nodeId' as node_id, step.ordinality as n
      from flow_calls fc
      cross join lateral jsonb_array_elements(
        case when jsonb_typeof(fc.flow_path) = 'array' then fc.flow_path else '[]'::jsonb end
      ) with ordinality as step(value, ordinality)
      where coalesce(step.value->>'flowId', '') = ''
    ),
    last_steps as (
      select distinct on (call_id) call_id, hangup_by, node_id from own_steps order by call_id, n desc
    )
    select 'total' as kind, null as node_id, count(*)::int as reached, 0 as hung_up from flow_calls
    union all
    select 'node', s.node_id, count(distinct s.call_id)::int,
      (select count(*)::int from last_steps l where l.node_id = s.node_id and l.hangup_by = 'callee')
    from own_steps s group by s.node_id
  `);
  const rows = rowsOf<{ kind: string; node_id: string | null; reached: number; hung_up: number }>(result);
  const counted = new Map<string, { reached: number; hungUp: number }>();
  let total = 0;
  for (const row of rows) {
    if (row.kind === 'total') total = Number(row.reached);
    else if (row.node_id)
      counted.set(row.node_id, { reached: Number(row.reached), hungUp: Number(row.hung_up) });
  }
  // Every node of the flow as the canvas shows it, then nodes only older versions had.
  const shown =
    flow.publishedVersion === null
      ? readGraph(flow.draft)
      : ((await versionGraph(db, flowId, flow.publishedVersion)) ?? readGraph(flow.draft));
  const ids = shown.nodes.map((n) => n.id);
  for (const id of counted.keys()) if (!ids.includes(id)) ids.push(id);
  return {
    from,
    to,
    calls: total,
    nodes: ids.map((nodeId) => ({ nodeId, ...(counted.get(nodeId) ?? { reached: 0, hungUp: 0 }) })),
  };
}

/** A flow a number may answer with: this project's and published. */
export async function assertBindableFlow(db: Database, projectId: string, flowId: string): Promise<void> {
  const [flow] = await db
    .select({ publishedVersion: callFlows.publishedVersion })
    .from(callFlows)
    .where(ofProject(projectId, flowId))
    .limit(1);
  if (!flow) throw badRequest('字段 flowId：流程不存在或已删除');
  if (flow.publishedVersion === null) throw badRequest('字段 flowId：流程尚未发布，发布后才能接听来电');
}
