import type {
  DashboardAttention,
  DashboardFigures,
  DashboardSummary,
  DashboardTask,
  DashboardTrendPoint,
  ReportDrill,
  TaskSettings,
} from '@callpilot/contracts';
import { and, desc, eq, gte, inArray, isNotNull, isNull, lt, ne, or, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { callStatsHourly, calls, callTasks, projectNumbers, sipTrunks } from '../../db/schema';
import type { TrunkControl } from '../../runtime/trunk-control';
import { usableCallerNumbers } from '../numbers/numbers.service';
import { getLimits } from '../projects/projects.service';
import { AVERAGE_CALL_SECONDS, countsOf, finishAfterWindowSeconds, toSummary } from '../tasks/tasks.service';
import { trunkStatusOf } from '../trunks/trunks.service';
import { numberWarnings } from './numbers-report';
import { HOUR_MS } from './rollup';
import { CHINA_OFFSET_MS, chinaDay, chinaDayStart, DAY_MS, drillRange } from './rollup-range';

/** The trend's days, today included. */
export const DASHBOARD_TREND_DAYS = 14;
/** Ringing time an unanswered call costs a task's line when estimating its pace. */
const UNANSWERED_RING_SECONDS = 25;
const MAX_RUNNING_TASKS = 20;
const MAX_ITEMS_PER_KIND = 5;

interface Totals {
  calls: number;
  outbound: number;
  inbound: number;
  answered: number;
  transferred: number;
  talkSeconds: number;
  graded: number;
  ab: number;
}
const zero = (): Totals => ({
  calls: 0,
  outbound: 0,
  inbound: 0,
  answered: 0,
  transferred: 0,
  talkSeconds: 0,
  graded: 0,
  ab: 0,
});
const add = (into: Totals, row: Totals) => {
  for (const key of Object.keys(into) as (keyof Totals)[]) into[key] += row[key];
};

function figuresOf(t: Totals, drill: ReportDrill | null, divideBy = 1): DashboardFigures {
  const per = (n: number) => Math.round((n / divideBy) * 10) / 10;
  return {
    calls: per(t.calls),
    outbound: per(t.outbound),
    inbound: per(t.inbound),
    answered: per(t.answered),
    answerRate: t.calls ? t.answered / t.calls : null,
    transferred: per(t.transferred),
    talkMinutes: Math.round((t.talkSeconds / 60 / divideBy) * 10) / 10,
    abShare: t.graded ? t.ab / t.graded : null,
    drill,
  };
}

/** The calls a rollup figure counts: ended ones, started in [start, end). */
const endedIn = (start: number, end: number): ReportDrill => ({
  ...drillRange(new Date(start), new Date(end)),
  status: 'ended',
});

/** China wall clock of an instant, as a person reads it: 11-24 09:30. */
const chinaClock = (at: number) =>
  new Date(at + CHINA_OFFSET_MS).toISOString().slice(5, 16).replace('T', ' ');

/**
 * Hourly rollups of the last 14 days by direction: every figure and trend of the page comes from
 * these few hundred rows, so the home page costs the same over a thousand calls or a million.
 */
async function hourlyTotals(db: Database, projectId: string, from: Date, to: Date) {
  const rows = await db
    .select({
      hour: callStatsHourly.hour,
      direction: callStatsHourly.direction,
      calls: sql<number>`sum(${callStatsHourly.calls})::int`,
      answered: sql<number>`sum(${callStatsHourly.answered})::int`,
      transferred: sql<number>`sum(${callStatsHourly.transferred})::int`,
      talkSeconds: sql<number>`sum(${callStatsHourly.talkSecondsSum})::int`,
      ab: sql<number>`sum(${callStatsHourly.gradeA} + ${callStatsHourly.gradeB})::int`,
      graded: sql<number>`sum(${callStatsHourly.gradeA} + ${callStatsHourly.gradeB} + ${callStatsHourly.gradeC} + ${callStatsHourly.gradeD})::int`,
    })
    .from(callStatsHourly)
    .where(
      and(
        eq(callStatsHourly.projectId, projectId),
        gte(callStatsHourly.hour, from),
        lt(callStatsHourly.hour, to),
      ),
    )
    .groupBy(callStatsHourly.hour, callStatsHourly.direction);
  return rows.map((r) => ({
    hour: r.hour.getTime(),
    totals: {
      calls: r.calls,
      outbound: r.direction === 'outbound' ? r.calls : 0,
      inbound: r.direction === 'inbound' ? r.calls : 0,
      answered: r.answered,
      transferred: r.transferred,
      talkSeconds: r.talkSeconds,
      graded: r.graded,
      ab: r.ab,
    },
  }));
}

/**
 * The ended calls of the current hour's part on each of the 7 days before today ([hour − n days,
 * now − n days)): rollups are whole hours, and "up to the same time" needs the minutes too.
 * One small range per day on (project, started_at).
 */
async function partialHours(db: Database, projectId: string, hourStart: number, now: number) {
  if (now === hourStart) return new Map<number, Totals>();
  const ranges: SQL[] = [];
  for (let n = 1; n <= 7; n++) {
    const r = and(
      gte(calls.startedAt, new Date(hourStart - n * DAY_MS)),
      lt(calls.startedAt, new Date(now - n * DAY_MS)),
    );
    if (r) ranges.push(r);
  }
  const answered = sql`${calls.answeredAt} is not null`;
  const rows = await db
    .select({
      daysBack: sql<number>`floor(extract(epoch from (${new Date(now).toISOString()}::timestamptz - ${calls.startedAt})) / 86400)::int`,
      calls: sql<number>`count(*)::int`,
      outbound: sql<number>`(count(*) filter (where ${calls.direction} = 'outbound'))::int`,
      inbound: sql<number>`(count(*) filter (where ${calls.direction} = 'inbound'))::int`,
      answered: sql<number>`(count(*) filter (where ${answered}))::int`,
      transferred: sql<number>`(count(*) filter (where ${calls.transferredAt} is not null))::int`,
      talkSeconds: sql<number>`coalesce(sum(${calls.talkSeconds}), 0)::int`,
      graded: sql<number>`(count(*) filter (where ${calls.intentGrade} is not null))::int`,
      ab: sql<number>`(count(*) filter (where ${calls.intentGrade} in ('A', 'B')))::int`,
    })
    .from(calls)
    .where(and(eq(calls.projectId, projectId), eq(calls.status, 'ended'), or(...ranges)))
    .groupBy(sql`1`);
  return new Map(rows.map(({ daysBack, ...t }) => [daysBack, t]));
}

/** Calls up right now, by direction and by task, from the partial index of live calls. */
async function liveCalls(db: Database, projectId: string) {
  const rows = await db
    .select({ direction: calls.direction, taskId: calls.taskId, n: sql<number>`count(*)::int` })
    .from(calls)
    .where(and(eq(calls.projectId, projectId), ne(calls.status, 'ended')))
    .groupBy(calls.direction, calls.taskId);
  const byTask = new Map<string, number>();
  let outbound = 0;
  let inbound = 0;
  for (const r of rows) {
    if (r.direction === 'inbound') inbound += r.n;
    else outbound += r.n;
    if (r.taskId) byTask.set(r.taskId, (byTask.get(r.taskId) ?? 0) + r.n);
  }
  return { outbound, inbound, byTask };
}

/** The recent pace an expected finish is computed from. */
const PACE_DAYS = 7;

/**
 * Each task's calls (all time) and the seconds its line spent per call over the last 7 days, from
 * the rollups: the recent pace, not a big task's months of calls.
 */
async function taskCalls(db: Database, projectId: string, taskIds: string[], now: number) {
  if (taskIds.length === 0) return { calls: new Map<string, number>(), pace: new Map<string, number>() };
  const recent = new Date(now - PACE_DAYS * DAY_MS);
  const recentOnly = (column: SQL) =>
    sql<number>`coalesce(sum(${column}) filter (where ${callStatsHourly.hour} >= ${recent.toISOString()}::timestamptz), 0)::int`;
  const rows = await db
    .select({
      taskId: callStatsHourly.taskId,
      calls: sql<number>`sum(${callStatsHourly.calls})::int`,
      recentCalls: recentOnly(sql`${callStatsHourly.calls}`),
      recentAnswered: recentOnly(sql`${callStatsHourly.answered}`),
      recentSeconds: recentOnly(sql`${callStatsHourly.talkSecondsSum} + ${callStatsHourly.waitSecondsSum}`),
    })
    .from(callStatsHourly)
    .where(and(eq(callStatsHourly.projectId, projectId), inArray(callStatsHourly.taskId, taskIds)))
    .groupBy(callStatsHourly.taskId);
  return {
    calls: new Map(rows.map((r) => [r.taskId, r.calls])),
    pace: new Map(
      rows
        .filter((r) => r.recentCalls > 0)
        .map((r) => [
          r.taskId,
          (r.recentSeconds + (r.recentCalls - r.recentAnswered) * UNANSWERED_RING_SECONDS) / r.recentCalls,
        ]),
    ),
  };
}

export interface DashboardDeps {
  /** The SIP runtime's view of trunks (read at request time: the runtime replaces it when SIP starts). */
  trunks: () => TrunkControl;
}

/**
 * 首页: today so far against yesterday and the week before at the same time of day, the trends,
 * the running tasks with when they should finish, what needs attention, and the limits.
 */
export async function dashboard(
  db: Database,
  projectId: string,
  now: number,
  deps: DashboardDeps,
): Promise<DashboardSummary> {
  const todayKey = chinaDay(new Date(now));
  const todayStart = chinaDayStart(todayKey).getTime();
  const hourStart = Math.floor(now / HOUR_MS) * HOUR_MS;
  const trendStart = todayStart - (DASHBOARD_TREND_DAYS - 1) * DAY_MS;

  const [hours, partial, live, limits, open, trunks, numbers] = await Promise.all([
    hourlyTotals(db, projectId, new Date(trendStart), new Date(hourStart + HOUR_MS)),
    partialHours(db, projectId, hourStart, now),
    liveCalls(db, projectId),
    getLimits(db, projectId),
    db
      .select()
      .from(callTasks)
      .where(
        and(
          eq(callTasks.projectId, projectId),
          inArray(callTasks.state, ['running', 'pending', 'paused']),
          isNull(callTasks.deletedAt),
        ),
      )
      .orderBy(desc(callTasks.startedAt), desc(callTasks.createdAt)),
    db
      .select()
      .from(sipTrunks)
      .where(and(eq(sipTrunks.projectId, projectId), eq(sipTrunks.enabled, true))),
    db
      .select({ number: projectNumbers.number, restingSince: projectNumbers.restingSince })
      .from(projectNumbers)
      .where(and(eq(projectNumbers.projectId, projectId), isNotNull(projectNumbers.restingSince))),
  ]);

  // --- figures -------------------------------------------------------------------------------
  const today = zero();
  const last7 = zero();
  const yesterdaySame = zero();
  const weekSame = zero();
  const sevenDaysAgo = todayStart - 6 * DAY_MS;
  const dayBuckets = new Map<number, Totals>();
  const hourBuckets = new Map<number, Totals>();
  for (const { hour, totals } of hours) {
    const dayStart = chinaDayStart(chinaDay(new Date(hour))).getTime();
    if (!dayBuckets.has(dayStart)) dayBuckets.set(dayStart, zero());
    add(dayBuckets.get(dayStart) as Totals, totals);
    if (hour >= todayStart - DAY_MS) {
      if (!hourBuckets.has(hour)) hourBuckets.set(hour, zero());
      add(hourBuckets.get(hour) as Totals, totals);
    }
    if (hour >= todayStart) add(today, totals);
    if (hour >= sevenDaysAgo) add(last7, totals);
    // Whole hours before the current hour's time on each earlier day; the rest is in `partial`.
    const daysBack = Math.ceil((todayStart - dayStart) / DAY_MS);
    if (daysBack >= 1 && daysBack <= 7 && hour < hourStart - daysBack * DAY_MS) {
      add(weekSame, totals);
      if (daysBack === 1) add(yesterdaySame, totals);
    }
  }
  for (const [daysBack, totals] of partial) {
    if (daysBack < 1 || daysBack > 7) continue;
    add(weekSame, totals);
    if (daysBack === 1) add(yesterdaySame, totals);
  }

  const point = (at: number, t: Totals | undefined, end: number): DashboardTrendPoint => ({
    at: new Date(at).toISOString(),
    calls: t?.calls ?? 0,
    answered: t?.answered ?? 0,
    drill: endedIn(at, end),
  });
  const hoursOf = (dayStart: number, untilHour: number) => {
    const out: DashboardTrendPoint[] = [];
    for (let h = dayStart; h < dayStart + DAY_MS && h <= untilHour; h += HOUR_MS)
      out.push(point(h, hourBuckets.get(h), h + HOUR_MS));
    return out;
  };
  const days: DashboardTrendPoint[] = [];
  for (let d = trendStart; d <= todayStart; d += DAY_MS) days.push(point(d, dayBuckets.get(d), d + DAY_MS));

  // --- tasks -----------------------------------------------------------------------------------
  const running = open.filter((t) => t.state === 'running').slice(0, MAX_RUNNING_TASKS);
  const [counts, { calls: callCounts, pace }, usable] = await Promise.all([
    countsOf(
      db,
      running.map((t) => t.id),
      { contactsOnly: true },
    ),
    taskCalls(
      db,
      projectId,
      running.map((t) => t.id),
      now,
    ),
    usableCallerNumbers(db, [projectId]),
  ]);
  const runningTasks: DashboardTask[] = running.map((row) => {
    const c = counts.get(row.id) ?? {
      total: 0,
      waiting: 0,
      dialing: 0,
      finished: 0,
      answered: 0,
      skipped: 0,
      calls: 0,
      byEndReason: {},
      byGrade: {},
    };
    const settings = row.settings as TaskSettings;
    const remaining = c.waiting + c.dialing;
    const seconds = Math.ceil(
      (remaining * (pace.get(row.id) ?? AVERAGE_CALL_SECONDS)) / settings.concurrency,
    );
    const finish = remaining > 0 ? finishAfterWindowSeconds(settings, now, seconds) : null;
    const { counts: _, ...summary } = toSummary(row, c, now);
    return {
      ...summary,
      counts: {
        total: c.total,
        waiting: c.waiting,
        dialing: c.dialing,
        finished: c.finished,
        answered: c.answered,
        calls: callCounts.get(row.id) ?? 0,
      },
      activeCalls: live.byTask.get(row.id) ?? 0,
      answerRate: c.finished ? c.answered / c.finished : null,
      expectedFinishAt: finish === null ? null : new Date(finish).toISOString(),
    };
  });

  // --- attention -------------------------------------------------------------------------------
  const attention: DashboardAttention[] = [];
  const push = (items: DashboardAttention[]) => attention.push(...items.slice(0, MAX_ITEMS_PER_KIND));
  // hasBalance false: the project is not metered (spec: everything available, no limits).
  if (limits.hasBalance && limits.balanceFen <= 0)
    push([
      {
        kind: 'no_balance',
        level: 'error',
        title: '项目余额不足',
        detail: '呼出任务与 API 呼叫暂停，充值后自动继续',
        link: '/account-info',
      },
    ]);
  const control = deps.trunks();
  push(
    trunks.flatMap((row) => {
      const status = trunkStatusOf(row, control, now);
      if (status.state !== 'failed' && status.state !== 'unreachable') return [];
      return [
        {
          kind: 'trunk_failing' as const,
          level: 'error' as const,
          title: `线路「${row.name}」${status.state === 'failed' ? '注册失败' : '不可达'}`,
          detail: status.detail ?? '该线路上的号码无法呼出或接听，请检查线路配置',
          link: `/ivr/trunks?trunk=${encodeURIComponent(row.id)}`,
        },
      ];
    }),
  );
  const callable = usable.get(projectId) ?? new Set<string>();
  push(
    open.flatMap((row) => {
      const chosen = (row.settings as TaskSettings).callerNumbers;
      if (chosen.length === 0 || chosen.some((n) => callable.has(n))) return [];
      return [
        {
          kind: 'task_no_numbers' as const,
          level: 'error' as const,
          title: `任务「${row.name}」没有可用的外显号码`,
          detail: `所选号码 ${chosen.join('、')} 均在休息、已停用或已删除，任务暂不呼叫`,
          link: `/call-task/task-detail/${encodeURIComponent(row.id)}`,
        },
      ];
    }),
  );
  push(
    runningTasks.flatMap((task) =>
      task.waitingUntil
        ? [
            {
              kind: 'task_waiting_window' as const,
              level: 'info' as const,
              title: `任务「${task.name}」在呼叫时段外等待`,
              detail: `${chinaClock(Date.parse(task.waitingUntil))} 继续呼叫`,
              link: `/call-task/task-detail/${encodeURIComponent(task.id)}`,
            },
          ]
        : [],
    ),
  );
  push(
    open
      .filter((row) => row.state === 'paused')
      .map((row) => ({
        kind: 'task_paused' as const,
        level: 'info' as const,
        title: `任务「${row.name}」已暂停`,
        detail: '继续后按剩余联系人呼叫',
        link: `/call-task/task-detail/${encodeURIComponent(row.id)}`,
      })),
  );
  const resting = new Set(numbers.map((n) => n.number));
  const warned = await numberWarnings(db, projectId, new Date(sevenDaysAgo), new Date(hourStart + HOUR_MS));
  push(
    warned
      .filter((r) => !resting.has(r.number))
      .map((r) => ({
        kind: 'number_warning' as const,
        level: 'warning' as const,
        title: `外显号码 ${r.number} 接通率骤降`,
        detail: `近 7 天接通率 ${percent(r.answerRate)}，此前 28 天 ${percent(r.baselineAnswerRate)}，可能已被标记，建议休息`,
        link: '/data-report/assistant',
      })),
  );
  push(
    numbers.map((n) => ({
      kind: 'number_resting' as const,
      level: 'info' as const,
      title: `外显号码 ${n.number} 休息中`,
      detail: `自 ${chinaClock((n.restingSince as Date).getTime())} 起不用于呼出任务`,
      link: '/ivr/numbers',
    })),
  );

  return {
    at: new Date(now).toISOString(),
    today: figuresOf(today, endedIn(todayStart, now + 1)),
    yesterdaySameTime: figuresOf(yesterdaySame, endedIn(todayStart - DAY_MS, now - DAY_MS)),
    weekAverageSameTime: figuresOf(weekSame, null, 7),
    last7Days: figuresOf(last7, endedIn(sevenDaysAgo, now + 1)),
    trend: {
      today: hoursOf(todayStart, hourStart),
      yesterday: hoursOf(todayStart - DAY_MS, todayStart),
      days,
    },
    runningTasks,
    attention,
    limits: {
      hasBalance: limits.hasBalance,
      balanceFen: limits.balanceFen,
      concurrentCallout: limits.concurrentCallout,
      concurrentCallin: limits.concurrentCallin,
      activeOutbound: live.outbound,
      activeInbound: live.inbound,
    },
  };
}

const percent = (rate: number) => `${Math.round(rate * 1000) / 10}%`;
