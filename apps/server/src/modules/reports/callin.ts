import {
  type CallinReport,
  END_REASON_LABELS,
  type EndReason,
  type ReportDrill,
  type ReportFigure,
  type ReportRangeQuery,
  type ReportRow,
} from '@callpilot/contracts';
import { and, eq, gte, inArray, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { callFlows, callStatsHourly, calls } from '../../db/schema';
import { NO_FLOW_FILTER, rowsOf } from '../calls/calls.service';
import {
  bucketOf,
  bucketStarts,
  CHINA_OFFSET_MS,
  drillRange,
  type ReportRange,
  ratio,
  reportRange,
} from './rollup-range';

export type CallinQuery = Pick<ReportRangeQuery, 'from' | 'to' | 'granularity' | 'lineNumber' | 'flowId'>;

const h = callStatsHourly;
/** The summed columns of the inbound report. */
const SUMS = {
  calls: h.calls,
  answered: h.answered,
  assistantAnswered: h.assistantAnswered,
  transferred: h.transferred,
  abandonedRinging: h.abandonedRinging,
  abandonedFlow: h.abandonedFlow,
  overLimit: h.overLimit,
  within3: h.answeredWithin3,
  within5: h.answeredWithin5,
  within10: h.answeredWithin10,
  within20: h.answeredWithin20,
  talkSum: h.talkSecondsSum,
  waitSum: h.waitSecondsSum,
} as const;
type SumKey = keyof typeof SUMS;
type Totals = Record<SumKey | 'talkMax' | 'waitMax', number>;

const zero = (): Totals => ({
  ...(Object.fromEntries(Object.keys(SUMS).map((k) => [k, 0])) as Record<SumKey, number>),
  talkMax: 0,
  waitMax: 0,
});

function add(into: Totals, row: Totals) {
  for (const key of Object.keys(SUMS) as SumKey[]) into[key] += row[key];
  into.talkMax = Math.max(into.talkMax, row.talkMax);
  into.waitMax = Math.max(into.waitMax, row.waitMax);
}

/** The by-flow key of the calls no flow answered (the rollup's "none"). */
const NO_FLOW = '';

/** Every end reason but the refusal at the limit: the list's way to say "not refused". */
const NOT_REFUSED = (Object.keys(END_REASON_LABELS) as EndReason[])
  .filter((r) => r !== 'callin_limit')
  .join(',');

/**
 * The list filters of each figure's definition (see rollup.ts), to add to the range's base drill.
 * Rates and averages drill to the calls they are computed over.
 */
const FIGURE_DRILLS: Record<keyof CallinReport['figures'], ReportDrill> = {
  offered: {},
  answered: { answered: 'yes' },
  assistantAnswered: { assistantTalked: 'yes' },
  transferred: { transferred: 'yes' },
  abandonedRinging: { answered: 'no', endReason: NOT_REFUSED },
  abandonedFlow: { answered: 'yes', assistantTalked: 'no', transferred: 'no', hangupBy: 'callee' },
  overLimit: { endReason: 'callin_limit' },
  answerRate: {},
  avgWaitSeconds: { answered: 'yes' },
  maxWaitSeconds: { answered: 'yes' },
  avgTalkSeconds: { answered: 'yes' },
  maxTalkSeconds: { answered: 'yes', sort: 'talkSeconds', order: 'desc' },
};

/** The wait buckets of 接通时长分布, in rounded seconds (inclusive), matching the list's waitMin/waitMax. */
const WAIT_BUCKETS: { label: string; min: number | null; max: number | null }[] = [
  { label: '3 秒内', min: null, max: 3 },
  { label: '4-5 秒', min: 4, max: 5 },
  { label: '6-10 秒', min: 6, max: 10 },
  { label: '11-20 秒', min: 11, max: 20 },
  { label: '20 秒以上', min: 21, max: null },
];

function figureValues(t: Totals): Record<keyof CallinReport['figures'], number> {
  return {
    offered: t.calls,
    answered: t.answered,
    assistantAnswered: t.assistantAnswered,
    transferred: t.transferred,
    abandonedRinging: t.abandonedRinging,
    abandonedFlow: t.abandonedFlow,
    overLimit: t.overLimit,
    answerRate: ratio(t.answered, t.calls),
    avgWaitSeconds: ratio(t.waitSum, t.answered),
    maxWaitSeconds: t.waitMax,
    avgTalkSeconds: ratio(t.talkSum, t.answered),
    maxTalkSeconds: t.talkMax,
  };
}

/** A breakdown row's values: the counts and rates the by-number and by-flow tables show. */
const rowValues = (t: Totals) => ({
  offered: t.calls,
  answered: t.answered,
  assistantAnswered: t.assistantAnswered,
  transferred: t.transferred,
  abandonedRinging: t.abandonedRinging,
  abandonedFlow: t.abandonedFlow,
  overLimit: t.overLimit,
  answerRate: ratio(t.answered, t.calls),
  avgWaitSeconds: ratio(t.waitSum, t.answered),
  avgTalkSeconds: ratio(t.talkSum, t.answered),
});

/** 呼入统计: inbound calls of the range (ended ones, by when they started), from the hourly rollups. */
export async function callinReport(
  db: Database,
  projectId: string,
  query: CallinQuery,
): Promise<CallinReport> {
  const range = reportRange(query);
  const base = (start: Date, end: Date): ReportDrill => ({
    ...drillRange(start, end),
    direction: 'inbound',
    status: 'ended',
    ...(query.lineNumber ? { lineNumber: query.lineNumber } : {}),
    ...(query.flowId ? { flowId: query.flowId } : {}),
  });
  const drillNow = base(range.start, range.end);
  const drillBefore = base(range.previousStart, range.previousEnd);

  const rows = await db
    .select({
      hour: h.hour,
      lineNumber: h.lineNumber,
      flowId: h.flowId,
      ...(Object.fromEntries(
        Object.entries(SUMS).map(([key, column]) => [key, sql<number>`sum(${column})::int`]),
      ) as Record<SumKey, ReturnType<typeof sql<number>>>),
      talkMax: sql<number>`max(${h.talkSecondsMax})::int`,
      waitMax: sql<number>`max(${h.waitSecondsMax})::int`,
    })
    .from(h)
    .where(
      and(
        eq(h.projectId, projectId),
        eq(h.direction, 'inbound'),
        gte(h.hour, range.previousStart),
        lt(h.hour, range.end),
        query.lineNumber ? eq(h.lineNumber, query.lineNumber) : undefined,
        query.flowId ? eq(h.flowId, query.flowId) : undefined,
      ),
    )
    .groupBy(h.hour, h.lineNumber, h.flowId);

  const now = zero();
  const previous = zero();
  const buckets = new Map(bucketStarts(range).map((at) => [at.getTime(), zero()]));
  const heat = new Map<string, number>();
  const byNumber = new Map<string, Totals>();
  const byFlow = new Map<string, Totals>();
  for (const raw of rows) {
    const row = { ...raw, ...numbers(raw) };
    if (row.hour < range.start) {
      add(previous, row);
      continue;
    }
    add(now, row);
    const bucket = buckets.get(bucketOf(row.hour, range.granularity));
    if (bucket) add(bucket, row);
    const china = new Date(row.hour.getTime() + CHINA_OFFSET_MS);
    const key = `${china.getUTCDay() || 7}/${china.getUTCHours()}`;
    heat.set(key, (heat.get(key) ?? 0) + row.calls);
    if (row.lineNumber) add(getOr(byNumber, row.lineNumber), row);
    // '' holds the calls no flow answered (a number bound to an assistant): a row of its own, so
    // the table adds up to the calls offered.
    add(getOr(byFlow, row.flowId), row);
  }

  const valuesNow = figureValues(now);
  const valuesBefore = figureValues(previous);
  const figures = Object.fromEntries(
    (Object.keys(FIGURE_DRILLS) as (keyof CallinReport['figures'])[]).map((key) => {
      // The longest wait drills to the calls that waited that long, in each period its own maximum.
      const extra = (totals: Totals) =>
        key === 'maxWaitSeconds' && totals.answered > 0
          ? { ...FIGURE_DRILLS[key], waitMin: String(totals.waitMax) }
          : FIGURE_DRILLS[key];
      const figure: ReportFigure = {
        value: valuesNow[key],
        previous: valuesBefore[key],
        drill: { ...drillNow, ...extra(now) },
        previousDrill: { ...drillBefore, ...extra(previous) },
      };
      return [key, figure];
    }),
  ) as CallinReport['figures'];

  const cumulative = [now.within3, now.within5, now.within10, now.within20, now.answered];
  const answeredWithin = WAIT_BUCKETS.map((b, i) => ({
    label: b.label,
    count: (cumulative[i] ?? 0) - (i > 0 ? (cumulative[i - 1] ?? 0) : 0),
    drill: {
      ...drillNow,
      answered: 'yes',
      ...(b.min !== null ? { waitMin: String(b.min) } : {}),
      ...(b.max !== null ? { waitMax: String(b.max) } : {}),
    },
  }));

  const trend = {
    granularity: range.granularity,
    points: [...buckets].map(([at, t]) => ({
      at: new Date(at).toISOString(),
      values: {
        offered: t.calls,
        answered: t.answered,
        assistantAnswered: t.assistantAnswered,
        transferred: t.transferred,
        abandoned: t.abandonedRinging + t.abandonedFlow,
        overLimit: t.overLimit,
        answerRate: ratio(t.answered, t.calls),
      },
    })),
  };

  const heatmap = [];
  for (let weekday = 1; weekday <= 7; weekday++)
    for (let hour = 0; hour < 24; hour++)
      heatmap.push({ weekday, hour, value: heat.get(`${weekday}/${hour}`) ?? 0 });

  const flowNames = await namesOfFlows(
    db,
    projectId,
    [...byFlow.keys()].filter((id) => id !== NO_FLOW),
  );
  const sorted = (map: Map<string, Totals>) =>
    [...map].sort((a, b) => b[1].calls - a[1].calls || (a[0] < b[0] ? -1 : 1));
  const numberRows: ReportRow[] = sorted(byNumber).map(([number, t]) => ({
    key: number,
    label: number,
    values: rowValues(t),
    drill: { ...drillNow, lineNumber: number },
  }));
  const flowRows: ReportRow[] = sorted(byFlow)
    // The calls without a flow close the table rather than sit among the flows.
    .sort((a, b) => Number(a[0] === NO_FLOW) - Number(b[0] === NO_FLOW))
    .map(([flowId, t]) =>
      flowId === NO_FLOW
        ? {
            key: NO_FLOW,
            label: '无通话流程',
            values: rowValues(t),
            drill: { ...drillNow, flowId: NO_FLOW_FILTER },
          }
        : {
            key: flowId,
            label: flowNames.get(flowId) ?? '已删除的流程',
            values: rowValues(t),
            drill: { ...drillNow, flowId },
          },
    );

  return {
    range: { from: range.from, to: range.to, previousFrom: range.previousFrom, previousTo: range.previousTo },
    figures,
    answeredWithin,
    trend,
    heatmap,
    byNumber: numberRows,
    byFlow: flowRows,
    flowFunnel: query.flowId
      ? (await flowFunnel(db, projectId, query.flowId, range, query.lineNumber)).map((step) => ({
          ...step,
          drill: { ...drillNow, flowNodeId: step.nodeId },
        }))
      : null,
  };
}

/** Aggregates come back as strings or numbers depending on the driver. */
function numbers(raw: Record<string, unknown>): Totals {
  const t = zero();
  for (const key of Object.keys(t) as (keyof Totals)[]) t[key] = Number(raw[key] ?? 0);
  return t;
}

function getOr(map: Map<string, Totals>, key: string): Totals {
  const found = map.get(key);
  if (found) return found;
  const created = zero();
  map.set(key, created);
  return created;
}

async function namesOfFlows(db: Database, projectId: string, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: callFlows.id, name: callFlows.name })
    .from(callFlows)
    .where(and(eq(callFlows.projectId, projectId), inArray(callFlows.id, ids)));
  return new Map(rows.map((r) => [r.id, r.name]));
}

/**
 * The chosen flow's funnel: each of its own nodes (a subflow's steps aside) with the ended calls
 * of the range that reached it, in the order calls reach them. Read from the calls' paths, not a
 * rollup: filtered by one flow (index calls_project_flow_started_idx), the range's calls are few.
 */
async function flowFunnel(
  db: Database,
  projectId: string,
  flowId: string,
  range: ReportRange,
  lineNumber: string | undefined,
): Promise<Omit<NonNullable<CallinReport['flowFunnel']>[number], 'drill'>[]> {
  const result = await db.execute(sql`
    with steps as (
      select c.id as call_id, step.value->>'nodeId' as node_id, step.value->>'nodeName' as node_name,
        step.ordinality as n
      from ${calls} c
      cross join lateral jsonb_array_elements(
        case when jsonb_typeof(c.flow_path) = 'array' then c.flow_path else '[]'::jsonb end
      ) with ordinality as step(value, ordinality)
      where c.project_id = ${projectId} and c.flow_id = ${flowId} and c.direction = 'inbound'
        and c.status = 'ended'
        and c.started_at >= ${range.start.toISOString()}::timestamptz
        and c.started_at < ${range.end.toISOString()}::timestamptz
        ${lineNumber ? sql`and c.callee_number = ${lineNumber}` : sql``}
        and coalesce(step.value->>'flowId', '') = ''
    )
    select node_id, max(node_name) as label, count(distinct call_id)::int as calls, min(n) as first
    from steps where node_id is not null group by node_id
    order by min(n), count(distinct call_id) desc, node_id
  `);
  return rowsOf<{ node_id: string; label: string | null; calls: number }>(result).map((r) => ({
    nodeId: r.node_id,
    label: r.label ?? r.node_id,
    calls: Number(r.calls),
  }));
}
