import { z } from 'zod';
import { reportDrill } from './reports';
import { taskCounts, taskSummary } from './tasks';

/**
 * 首页: the day's story. Figures come from the report rollups (ended calls, China time), so they
 * agree with 数据统计 and drill to the same call lists.
 */
export const dashboardFigures = z.object({
  calls: z.number(),
  outbound: z.number(),
  inbound: z.number(),
  answered: z.number(),
  answerRate: z.number().nullable(),
  transferred: z.number(),
  talkMinutes: z.number(),
  /** Share of graded calls with intent A or B. */
  abShare: z.number().nullable(),
  /** The call-record list of these calls; null for averages, which no list reproduces. */
  drill: reportDrill.nullable(),
});
export type DashboardFigures = z.infer<typeof dashboardFigures>;

export const dashboardTrendPoint = z.object({
  /** The bucket's start (an hour, or a China day). */
  at: z.iso.datetime(),
  calls: z.number().int(),
  answered: z.number().int(),
  drill: reportDrill,
});
export type DashboardTrendPoint = z.infer<typeof dashboardTrendPoint>;

/**
 * A running task on the home page: its contacts' states (calls counted from the rollups; the task
 * page has the counts by end reason and grade).
 */
export const dashboardTask = taskSummary.omit({ counts: true }).extend({
  counts: taskCounts.pick({
    total: true,
    waiting: true,
    dialing: true,
    finished: true,
    answered: true,
    calls: true,
  }),
  /** Calls of this task ringing or talking right now. */
  activeCalls: z.number().int(),
  answerRate: z.number().nullable(),
  /** When the remaining contacts should be done at the current pace, calling windows included. */
  expectedFinishAt: z.iso.datetime().nullable(),
});
export type DashboardTask = z.infer<typeof dashboardTask>;

export const dashboardAttentionKind = z.enum([
  'no_balance',
  'trunk_failing',
  'task_no_numbers',
  'task_waiting_window',
  'task_paused',
  'number_warning',
  'number_resting',
]);
export type DashboardAttentionKind = z.infer<typeof dashboardAttentionKind>;

/** Something an operator should look at, worst first, each with where to act on it. */
export const dashboardAttention = z.object({
  kind: dashboardAttentionKind,
  level: z.enum(['error', 'warning', 'info']),
  title: z.string(),
  detail: z.string(),
  /** A console path (with its query) where the operator acts on it. */
  link: z.string(),
});
export type DashboardAttention = z.infer<typeof dashboardAttention>;

export const dashboardSummary = z
  .object({
    /** When the figures were read; "today" is this moment's China day. */
    at: z.iso.datetime(),
    /** Today so far. */
    today: dashboardFigures,
    /** Yesterday up to the same time of day, the fair comparison for a day still running. */
    yesterdaySameTime: dashboardFigures,
    /** The average of the 7 days before today, each up to the same time of day. */
    weekAverageSameTime: dashboardFigures,
    /** The last 7 days, today included. */
    last7Days: dashboardFigures,
    trend: z.object({
      /** Today's and yesterday's calls per hour, 24 points each. */
      today: z.array(dashboardTrendPoint),
      yesterday: z.array(dashboardTrendPoint),
      /** The last 14 China days, today included. */
      days: z.array(dashboardTrendPoint),
    }),
    runningTasks: z.array(dashboardTask),
    attention: z.array(dashboardAttention),
    /** The spec's balance record: with hasBalance false the project is not metered (no limits). */
    limits: z.object({
      hasBalance: z.boolean(),
      balanceFen: z.number().int(),
      concurrentCallout: z.number().int(),
      concurrentCallin: z.number().int(),
      /** Calls up right now, by direction. */
      activeOutbound: z.number().int(),
      activeInbound: z.number().int(),
    }),
  })
  .meta({ id: 'DashboardSummary' });
export type DashboardSummary = z.infer<typeof dashboardSummary>;
