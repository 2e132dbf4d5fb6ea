import { REPORT_HOURLY_MAX_DAYS, type ReportDrill, type ReportRangeQuery } from '@callpilot/contracts';
import { type AnyColumn, sql } from 'drizzle-orm';
import { badRequest } from '../../lib/errors';
import { HOUR_MS } from './rollup';

/** China time: UTC+8 with no daylight saving, so a fixed offset is exact. */
export const CHINA_OFFSET_MS = 8 * HOUR_MS;
export const DAY_MS = 24 * HOUR_MS;

/** The instant a China day (YYYY-MM-DD) starts. */
export const chinaDayStart = (day: string) => new Date(Date.parse(`${day}T00:00:00+08:00`));
/** The China day (YYYY-MM-DD) an instant falls on. */
export const chinaDay = (at: Date) => new Date(at.getTime() + CHINA_OFFSET_MS).toISOString().slice(0, 10);

export interface ReportRange {
  /** [start, end) of the range's China days, and of the previous period of equal length. */
  start: Date;
  end: Date;
  previousStart: Date;
  previousEnd: Date;
  days: number;
  granularity: 'hour' | 'day';
  /** The call list's from/to of the range (a drill's base). */
  drill: ReportDrill;
  /** The days as given, and the previous period's (YYYY-MM-DD, inclusive). */
  from: string;
  to: string;
  previousFrom: string;
  previousTo: string;
}

/**
 * The range of every report's query (China days, the previous period of equal length, the
 * granularity): hourly up to 31 days ('auto'), daily beyond; hourly over more days is refused.
 */
export function reportRange(query: Pick<ReportRangeQuery, 'from' | 'to' | 'granularity'>): ReportRange {
  const start = chinaDayStart(query.from);
  const end = new Date(chinaDayStart(query.to).getTime() + DAY_MS);
  const days = Math.round((end.getTime() - start.getTime()) / DAY_MS);
  if (query.granularity === 'hour' && days > REPORT_HOURLY_MAX_DAYS)
    throw badRequest(`字段 granularity：按小时统计的范围不能超过 ${REPORT_HOURLY_MAX_DAYS} 天`);
  const granularity =
    query.granularity === 'auto' ? (days <= REPORT_HOURLY_MAX_DAYS ? 'hour' : 'day') : query.granularity;
  const previousStart = new Date(start.getTime() - days * DAY_MS);
  return {
    start,
    end,
    previousStart,
    previousEnd: start,
    drill: drillRange(start, end),
    days,
    granularity,
    from: query.from,
    to: query.to,
    previousFrom: chinaDay(previousStart),
    previousTo: chinaDay(new Date(start.getTime() - DAY_MS)),
  };
}

/** The call list's time filters for [start, end): its `to` is inclusive, so the last millisecond. */
export const drillRange = (start: Date, end: Date): ReportDrill => ({
  from: start.toISOString(),
  to: new Date(end.getTime() - 1).toISOString(),
});

/** Bucket starts of a range, zero-filled: every hour, or every China day. */
export function bucketStarts(range: Pick<ReportRange, 'start' | 'end' | 'granularity'>): Date[] {
  const step = range.granularity === 'hour' ? HOUR_MS : DAY_MS;
  const out: Date[] = [];
  for (let t = range.start.getTime(); t < range.end.getTime(); t += step) out.push(new Date(t));
  return out;
}

/** The bucket an hour row falls in (a China day starts at 16:00 UTC). */
export const bucketOf = (hour: Date, granularity: 'hour' | 'day') =>
  granularity === 'hour' ? hour.getTime() : chinaDayStart(chinaDay(hour)).getTime();

/**
 * bucketOf(…, 'day') in SQL: the start of the China day an hour column falls in, so a query can
 * sum a day's rollup rows in the database instead of sending each hour's.
 */
export const chinaDaySql = (hour: AnyColumn) =>
  sql`(date_trunc('day', (${hour} at time zone 'UTC') + interval '8 hours') - interval '8 hours') at time zone 'UTC'`;

/** A ratio, 0 when there is nothing to divide. */
export const ratio = (part: number, whole: number) => (whole > 0 ? part / whole : 0);
