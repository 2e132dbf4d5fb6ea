import type { NumberHealthReport, NumberHealthRow, ReportRangeQuery } from '@callpilot/contracts';
import { and, eq, gte, lt, ne, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { callStatsHourly, projectNumbers } from '../../db/schema';
import type { ReportSheet } from './report-file';
import { bucketStarts, chinaDaySql, ratio, reportRange } from './rollup-range';

const DAY = 86_400_000;
/** A number's own history the range is compared with. */
export const BASELINE_DAYS = 28;
/**
 * 标记号码 warning: with fewer calls a drop is noise (5 of 20 answered is an unlucky afternoon), so
 * both the range and the baseline need this many calls; then a rate under 60% of the number's own
 * baseline is the sharp fall carriers' and phone apps' spam marks cause (a marked number typically
 * loses half or more of its answers overnight, while ordinary daily swings stay within ±20%).
 */
export const WARNING_MIN_CALLS = 50;
export const WARNING_RATE_FACTOR = 0.6;

export function numberWarning(
  range: { calls: number; answered: number },
  baseline: { calls: number; answered: number },
) {
  if (range.calls < WARNING_MIN_CALLS || baseline.calls < WARNING_MIN_CALLS) return false;
  return range.answered / range.calls < (baseline.answered / baseline.calls) * WARNING_RATE_FACTOR;
}

/**
 * The caller numbers whose answer rate in [start, end) fell sharply against the 28 days before:
 * one aggregate per number (the home page's warning list, which needs no trend).
 */
export async function numberWarnings(db: Database, projectId: string, start: Date, end: Date) {
  const baselineStart = new Date(start.getTime() - BASELINE_DAYS * DAY);
  const inRange = sql`${callStatsHourly.hour} >= ${start.toISOString()}::timestamptz`;
  const rows = await db
    .select({
      number: callStatsHourly.lineNumber,
      calls: sql<number>`coalesce(sum(${callStatsHourly.calls}) filter (where ${inRange}), 0)::int`,
      answered: sql<number>`coalesce(sum(${callStatsHourly.answered}) filter (where ${inRange}), 0)::int`,
      baselineCalls: sql<number>`coalesce(sum(${callStatsHourly.calls}) filter (where not ${inRange}), 0)::int`,
      baselineAnswered: sql<number>`coalesce(sum(${callStatsHourly.answered}) filter (where not ${inRange}), 0)::int`,
    })
    .from(callStatsHourly)
    .where(
      and(
        eq(callStatsHourly.projectId, projectId),
        eq(callStatsHourly.direction, 'outbound'),
        ne(callStatsHourly.lineNumber, ''),
        gte(callStatsHourly.hour, baselineStart),
        lt(callStatsHourly.hour, end),
      ),
    )
    .groupBy(callStatsHourly.lineNumber);
  return rows
    .filter((r) =>
      numberWarning(
        { calls: r.calls, answered: r.answered },
        { calls: r.baselineCalls, answered: r.baselineAnswered },
      ),
    )
    .map((r) => ({
      number: r.number,
      answerRate: r.answered / r.calls,
      baselineAnswerRate: r.baselineAnswered / r.baselineCalls,
    }));
}

/**
 * 外显号码健康度: per caller number of the project's outbound calls, from the hourly rollups, with
 * a daily trend and the number's answer rate over the 28 days before the range.
 */
export async function numberHealthReport(
  db: Database,
  projectId: string,
  query: Pick<ReportRangeQuery, 'from' | 'to' | 'granularity'>,
): Promise<NumberHealthReport> {
  const window = reportRange(query);
  const baselineStart = new Date(window.start.getTime() - BASELINE_DAYS * DAY);
  // Summed per China day in the database: the table is hourly per number, task and assistant, so
  // 58 days of a busy project are hundreds of thousands of rows, while the report needs one per
  // number and day (the range and the baseline both start at a China midnight).
  const day = chinaDaySql(callStatsHourly.hour);
  const daily = await db
    .select({
      number: callStatsHourly.lineNumber,
      day: day.mapWith(callStatsHourly.hour),
      calls: sql<number>`sum(${callStatsHourly.calls})::int`,
      answered: sql<number>`sum(${callStatsHourly.answered})::int`,
      shortAnswered: sql<number>`sum(${callStatsHourly.shortAnswered})::int`,
      rejected: sql<number>`sum(${callStatsHourly.rejected})::int`,
    })
    .from(callStatsHourly)
    .where(
      and(
        eq(callStatsHourly.projectId, projectId),
        eq(callStatsHourly.direction, 'outbound'),
        ne(callStatsHourly.lineNumber, ''),
        gte(callStatsHourly.hour, baselineStart),
        lt(callStatsHourly.hour, window.end),
      ),
    )
    .groupBy(callStatsHourly.lineNumber, day);

  type Totals = { calls: number; answered: number; shortAnswered: number; rejected: number };
  const zero = (): Totals => ({ calls: 0, answered: 0, shortAnswered: 0, rejected: 0 });
  const numbers = new Map<string, { range: Totals; baseline: Totals; days: Map<number, Totals> }>();
  const dayStarts = bucketStarts({ ...window, granularity: 'day' }).map((d) => d.getTime());
  for (const h of daily) {
    let entry = numbers.get(h.number);
    if (!entry) {
      entry = { range: zero(), baseline: zero(), days: new Map(dayStarts.map((t) => [t, zero()])) };
      numbers.set(h.number, entry);
    }
    const inRange = h.day >= window.start;
    const targets = inRange ? [entry.range, entry.days.get(h.day.getTime())] : [entry.baseline];
    for (const t of targets) {
      if (!t) continue;
      t.calls += h.calls;
      t.answered += h.answered;
      t.shortAnswered += h.shortAnswered;
      t.rejected += h.rejected;
    }
  }

  const own = new Map(
    (
      await db
        .select({ number: projectNumbers.number, restingSince: projectNumbers.restingSince })
        .from(projectNumbers)
        .where(eq(projectNumbers.projectId, projectId))
    ).map((n) => [n.number, n.restingSince]),
  );
  const rows: NumberHealthRow[] = [];
  for (const [number, { range, baseline, days }] of numbers) {
    // A number used only before the range has nothing to report for it.
    if (range.calls === 0) continue;
    rows.push({
      number,
      calls: range.calls,
      answered: range.answered,
      answerRate: ratio(range.answered, range.calls),
      baselineAnswerRate: baseline.calls > 0 ? baseline.answered / baseline.calls : null,
      shortAnsweredShare: ratio(range.shortAnswered, range.answered),
      rejected: range.rejected,
      warning: numberWarning(range, baseline),
      projectNumber: own.has(number),
      restingSince: own.get(number)?.toISOString() ?? null,
      trend: [...days].map(([t, d]) => ({
        at: new Date(t).toISOString(),
        answerRate: d.calls > 0 ? d.answered / d.calls : null,
        calls: d.calls,
      })),
      // lineNumber, exact: `number` matches a part of either side, a customer's number too.
      drill: { ...window.drill, direction: 'outbound', lineNumber: number },
    });
  }
  // Warnings first, then the busiest numbers.
  rows.sort(
    (x, y) => Number(y.warning) - Number(x.warning) || y.calls - x.calls || x.number.localeCompare(y.number),
  );
  return { rows };
}

const percent = (rate: number) => Math.round(rate * 1000) / 10;

/** The health table as a spreadsheet, warnings spelled out with the advice the console gives. */
export function numberHealthSheet(report: NumberHealthReport): ReportSheet {
  const header = [
    '外显号码',
    '通话数',
    '接通数',
    '接通率(%)',
    `近 ${BASELINE_DAYS} 天基准接通率(%)`,
    '10 秒内挂断占比(%)',
    '拒接/忙线',
    '预警',
    '状态',
  ];
  const rows = report.rows.map((r) => [
    r.number,
    r.calls,
    r.answered,
    percent(r.answerRate),
    r.baselineAnswerRate === null ? '' : percent(r.baselineAnswerRate),
    percent(r.shortAnsweredShare),
    r.rejected,
    r.warning ? '接通率骤降，建议暂停使用该号码（休息）' : '',
    r.restingSince ? '休息中' : '',
  ]);
  return { name: '外显号码健康度', header, rows };
}
