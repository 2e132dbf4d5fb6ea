import type {
  AssistantReport,
  AssistantReportRow,
  LatencyComponent,
  ReportDrill,
  ReportRangeQuery,
} from '@callpilot/contracts';
import { and, eq, gte, isNotNull, lt, ne, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { assistants, callStatsHistogram, callStatsHourly, calls } from '../../db/schema';
import { badRequest } from '../../lib/errors';
import { lineNumberSql, rowsOf } from '../calls/calls.service';
import type { ReportSheet } from './report-file';
import {
  HANGUP_TURN_CAP,
  histogramSelect,
  LATENCY_COMPONENTS,
  percentileFromBuckets,
} from './rollup-histograms';
import { bucketOf, bucketStarts, chinaDaySql, type ReportRange, ratio, reportRange } from './rollup-range';

const GRADES = ['A', 'B', 'C', 'D'] as const;
type Grade = (typeof GRADES)[number];

const emptyGrades = (): Record<Grade, number> => ({ A: 0, B: 0, C: 0, D: 0 });

const sums = {
  calls: sql<number>`coalesce(sum(${callStatsHourly.calls}), 0)::int`,
  answered: sql<number>`coalesce(sum(${callStatsHourly.answered}), 0)::int`,
  transferred: sql<number>`coalesce(sum(${callStatsHourly.transferred}), 0)::int`,
  optOut: sql<number>`coalesce(sum(${callStatsHourly.optOut}), 0)::int`,
  talkSeconds: sql<number>`coalesce(sum(${callStatsHourly.talkSecondsSum}), 0)::int`,
  turns: sql<number>`coalesce(sum(${callStatsHourly.turnsSum}), 0)::int`,
  gradeA: sql<number>`coalesce(sum(${callStatsHourly.gradeA}), 0)::int`,
  gradeB: sql<number>`coalesce(sum(${callStatsHourly.gradeB}), 0)::int`,
  gradeC: sql<number>`coalesce(sum(${callStatsHourly.gradeC}), 0)::int`,
  gradeD: sql<number>`coalesce(sum(${callStatsHourly.gradeD}), 0)::int`,
};
type Sums = { [K in keyof typeof sums]: number };

/**
 * Rates over the answered calls where only an answered call can have the outcome (transfer,
 * opt-out, turns, talk time); the answer rate over all calls.
 */
function figures(s: Sums) {
  return {
    calls: s.calls,
    answered: s.answered,
    answerRate: ratio(s.answered, s.calls),
    avgTurns: ratio(s.turns, s.answered),
    avgTalkSeconds: ratio(s.talkSeconds, s.answered),
    grades: { A: s.gradeA, B: s.gradeB, C: s.gradeC, D: s.gradeD },
    transferRate: ratio(s.transferred, s.answered),
    optOutRate: ratio(s.optOut, s.answered),
  };
}

function addSums(into: Sums, s: Sums) {
  for (const key of Object.keys(sums) as (keyof Sums)[]) into[key] += s[key];
}
const zeroSums = (): Sums => Object.fromEntries(Object.keys(sums).map((key) => [key, 0])) as unknown as Sums;

/**
 * 小助手报表: per assistant (all versions, draft test calls included) and per published version,
 * from the hourly rollups; latency percentiles and the hang-up funnel from the histograms; grading
 * agreement from the calls themselves (re-graded calls are few). Calls without an assistant (a
 * flow that never reached one) are not part of it.
 *
 * Narrowed to a number (lineNumber) or a task (taskId) every part follows: the hourly rollup keeps
 * both dimensions, the histogram rollup does not, so the funnel and latencies are then read from
 * the narrowed calls themselves (one number's or task's calls, by the same definition). A flow is
 * refused: a call a flow answered keeps no assistant (its assistant node talked inside the flow),
 * so every flow would answer an empty report that looks like "no calls".
 */
export async function assistantReport(
  db: Database,
  projectId: string,
  query: ReportRangeQuery,
): Promise<AssistantReport> {
  if (query.flowId)
    throw badRequest(
      '字段 flowId：小助手报表不按流程筛选（流程接听的通话不记在小助手名下），请在呼入统计中按流程查看',
    );
  const range = reportRange(query);
  // Every drill of the report keeps the number and task it was narrowed to.
  const window: ReportRange = {
    ...range,
    drill: {
      ...range.drill,
      ...(query.lineNumber ? { lineNumber: query.lineNumber } : {}),
      ...(query.taskId ? { taskId: query.taskId } : {}),
    },
  };
  const inRange = and(
    ofReport(callStatsHourly, projectId, query, window),
    query.lineNumber ? eq(callStatsHourly.lineNumber, query.lineNumber) : undefined,
    query.taskId ? eq(callStatsHourly.taskId, query.taskId) : undefined,
  );

  // One pass over the range's rollup rows, summed per trend bucket and version in the database:
  // the table is hourly per number and task as well, so a month of a busy project is a hundred
  // thousand rows or more, while this needs one row per bucket and version. The versions' totals
  // and the trend are both sums of these.
  const bucket =
    window.granularity === 'hour' ? sql`${callStatsHourly.hour}` : chinaDaySql(callStatsHourly.hour);
  const perBucket = await db
    .select({
      bucket: bucket.mapWith(callStatsHourly.hour),
      assistantId: callStatsHourly.assistantId,
      version: callStatsHourly.assistantVersion,
      ...sums,
    })
    .from(callStatsHourly)
    .where(inRange)
    .groupBy(bucket, callStatsHourly.assistantId, callStatsHourly.assistantVersion);
  const versionTotals = new Map<string, { assistantId: string; version: number } & Sums>();
  for (const r of perBucket) {
    const key = `${r.assistantId}\u0000${r.version}`;
    let total = versionTotals.get(key);
    if (!total) {
      total = { assistantId: r.assistantId, version: r.version, ...zeroSums() };
      versionTotals.set(key, total);
    }
    addSums(total, r);
  }
  const byVersion = [...versionTotals.values()];

  const ids = [...new Set(byVersion.map((r) => r.assistantId))];
  // A project has tens of assistants: their current names in one read, for rows and grading alike.
  const names = new Map(
    (
      await db
        .select({ id: assistants.id, name: assistants.name })
        .from(assistants)
        .where(eq(assistants.projectId, projectId))
    ).map((a) => [a.id, a.name]),
  );

  const rows: AssistantReportRow[] = [];
  for (const assistantId of ids.sort((x, y) =>
    (names.get(x) ?? x).localeCompare(names.get(y) ?? y, 'zh-CN'),
  )) {
    const versions = byVersion
      .filter((r) => r.assistantId === assistantId)
      .sort((x, y) => y.version - x.version);
    const total = zeroSums();
    for (const v of versions) addSums(total, v);
    const assistantName = names.get(assistantId) ?? '';
    const drill: ReportDrill = { ...window.drill, assistantId };
    rows.push({ assistantId, assistantName, version: null, ...figures(total), drill });
    // Version 0 holds draft test calls: counted in the assistant's total, never a row of its own.
    for (const v of versions.filter((v) => v.version > 0))
      rows.push({
        assistantId,
        assistantName,
        version: v.version,
        ...figures(v),
        drill: { ...drill, assistantVersion: String(v.version) },
      });
  }

  const trendSums = new Map(bucketStarts(window).map((t) => [t.getTime(), zeroSums()]));
  for (const r of perBucket) {
    const total = trendSums.get(bucketOf(r.bucket, window.granularity));
    if (total) addSums(total, r);
  }
  const trend = {
    granularity: window.granularity,
    points: [...trendSums].map(([t, s]) => ({
      at: new Date(t).toISOString(),
      values: {
        calls: s.calls,
        answered: s.answered,
        answerRate: ratio(s.answered, s.calls),
        transferred: s.transferred,
        optOut: s.optOut,
      },
    })),
  };

  const histogram =
    query.lineNumber || query.taskId
      ? await histogramOfCalls(db, callsInReport(projectId, query, window))
      : await db
          .select({
            kind: callStatsHistogram.kind,
            bucket: callStatsHistogram.bucket,
            count: sql<number>`sum(${callStatsHistogram.count})::int`,
          })
          .from(callStatsHistogram)
          .where(ofReport(callStatsHistogram, projectId, query, window))
          .groupBy(callStatsHistogram.kind, callStatsHistogram.bucket);

  const hangupFunnel = histogram
    .filter((h) => h.kind === 'hangup_turn' && h.count > 0)
    .sort((x, y) => x.bucket - y.bucket)
    .map((h) => ({
      turn: h.bucket,
      calls: h.count,
      // The histogram's definition (rollup-histograms.ts); the last bucket holds every longer call.
      drill: {
        ...window.drill,
        ...(query.assistantId ? { assistantId: query.assistantId } : {}),
        status: 'ended',
        answered: 'yes',
        hangupBy: 'callee',
        turnsMin: String(h.bucket),
        ...(h.bucket < HANGUP_TURN_CAP ? { turnsMax: String(h.bucket) } : {}),
      },
    }));
  const latency = LATENCY_COMPONENTS.map((component) => {
    const buckets = histogram.filter((h) => h.kind === `latency_${component}`);
    return {
      component: component as LatencyComponent,
      p50Ms: percentileFromBuckets(buckets, 0.5),
      p95Ms: percentileFromBuckets(buckets, 0.95),
      samples: buckets.reduce((sum, b) => sum + b.count, 0),
    };
  });

  return {
    rows,
    trend,
    hangupFunnel,
    latency,
    grading: await gradingAgreement(db, projectId, query, window, names),
  };
}

/** A rollup's rows of the report: the project's hours of the range, the assistant or every one. */
function ofReport(
  table: typeof callStatsHourly | typeof callStatsHistogram,
  projectId: string,
  query: ReportRangeQuery,
  window: ReportRange,
) {
  return and(
    eq(table.projectId, projectId),
    gte(table.hour, window.start),
    lt(table.hour, window.end),
    query.assistantId ? eq(table.assistantId, query.assistantId) : ne(table.assistantId, ''),
  );
}

/** The report's calls as a condition on `calls`: the range, the assistant(s), the number and task. */
function callsInReport(projectId: string, query: ReportRangeQuery, window: ReportRange): SQL {
  return and(
    eq(calls.projectId, projectId),
    gte(calls.startedAt, window.start),
    lt(calls.startedAt, window.end),
    query.assistantId ? eq(calls.assistantId, query.assistantId) : isNotNull(calls.assistantId),
    query.lineNumber ? sql`${lineNumberSql} = ${query.lineNumber}` : undefined,
    query.taskId ? eq(calls.taskId, query.taskId) : undefined,
  ) as SQL;
}

/** The hang-up and latency histograms of the report's calls, summed over assistants and versions. */
async function histogramOfCalls(db: Database, where: SQL) {
  const result = await db.execute(sql`
    select h.kind, h.bucket, sum(h.count)::int as count
    from (${histogramSelect(where)}) h
    group by h.kind, h.bucket`);
  return rowsOf<{ kind: string; bucket: number; count: number }>(result).map((r) => ({
    kind: r.kind,
    bucket: Number(r.bucket),
    count: Number(r.count),
  }));
}

/**
 * 评级一致性 per assistant version: calls of the range a person graded that the machine had graded
 * too (a human grade alone says nothing about the machine), machine grade × human grade.
 */
async function gradingAgreement(
  db: Database,
  projectId: string,
  query: ReportRangeQuery,
  window: ReportRange,
  names: Map<string, string>,
): Promise<AssistantReport['grading']> {
  const pairs = await db
    .select({
      assistantId: calls.assistantId,
      version: calls.assistantVersion,
      machine: calls.machineGrade,
      human: calls.humanGrade,
      count: sql<number>`count(*)::int`,
    })
    .from(calls)
    .where(
      and(
        callsInReport(projectId, query, window),
        isNotNull(calls.humanGrade),
        isNotNull(calls.machineGrade),
      ),
    )
    .groupBy(calls.assistantId, calls.assistantVersion, calls.machineGrade, calls.humanGrade);

  const groups = new Map<string, AssistantReport['grading'][number]>();
  for (const p of pairs) {
    const assistantId = p.assistantId ?? '';
    const key = `${assistantId}\u0000${p.version ?? ''}`;
    let group = groups.get(key);
    if (!group) {
      const drill: ReportDrill = { ...window.drill, assistantId, humanGraded: 'yes' };
      if (p.version !== null) drill.assistantVersion = String(p.version);
      group = {
        assistantId,
        assistantName: names.get(assistantId) ?? '',
        version: p.version,
        regraded: 0,
        agreed: 0,
        matrix: { A: emptyGrades(), B: emptyGrades(), C: emptyGrades(), D: emptyGrades() },
        drill,
      };
      groups.set(key, group);
    }
    const machine = p.machine as Grade;
    const human = p.human as Grade;
    group.matrix[machine][human] += p.count;
    group.regraded += p.count;
    if (machine === human) group.agreed += p.count;
  }
  return [...groups.values()].sort(
    (x, y) =>
      x.assistantName.localeCompare(y.assistantName, 'zh-CN') ||
      x.assistantId.localeCompare(y.assistantId) ||
      (y.version ?? 0) - (x.version ?? 0),
  );
}

const percent = (rate: number) => Math.round(rate * 1000) / 10;
const oneDecimal = (n: number) => Math.round(n * 10) / 10;

/** The report's table as a spreadsheet: one line per assistant and per version, rates in %. */
export function assistantReportSheet(report: AssistantReport): ReportSheet {
  const header = [
    '小助手',
    '版本',
    '通话数',
    '接通数',
    '接通率(%)',
    '平均轮次',
    '平均通话时长(秒)',
    'A 级',
    'B 级',
    'C 级',
    'D 级',
    '转人工率(%)',
    '拒绝再联系率(%)',
  ];
  const rows = report.rows.map((r) => [
    r.assistantName || r.assistantId,
    r.version === null ? '全部版本' : `v${r.version}`,
    r.calls,
    r.answered,
    percent(r.answerRate),
    oneDecimal(r.avgTurns),
    oneDecimal(r.avgTalkSeconds),
    r.grades.A ?? 0,
    r.grades.B ?? 0,
    r.grades.C ?? 0,
    r.grades.D ?? 0,
    percent(r.transferRate),
    percent(r.optOutRate),
  ]);
  return { name: '小助手报表', header, rows };
}
