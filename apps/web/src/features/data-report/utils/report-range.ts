import { REPORT_MAX_DAYS, type ReportDrill, reportRangeQuery } from '@callpilot/contracts';
import dayjs, { type Dayjs } from 'dayjs';
import { callListHref } from '@/entities/call/utils/call-paths';

/** China time (UTC+8, no daylight saving): a report's days are China days wherever the browser is. */
const CHINA_OFFSET_MINUTES = 8 * 60;
export const DAY_FORMAT = 'YYYY-MM-DD';

/** Today's date in China, as a dayjs at local midnight of that calendar day (only its date is read). */
export function chinaToday(now: Date = new Date()): Dayjs {
  const china = new Date(now.getTime() + CHINA_OFFSET_MINUTES * 60_000);
  return dayjs(china.toISOString().slice(0, 10));
}

export type RangePreset = { key: string; label: string; range: (today: Dayjs) => [Dayjs, Dayjs] };

export const RANGE_PRESETS: readonly RangePreset[] = [
  { key: 'today', label: '今天', range: (today) => [today, today] },
  { key: 'yesterday', label: '昨天', range: (today) => [today.subtract(1, 'day'), today.subtract(1, 'day')] },
  { key: 'last7', label: '近 7 天', range: (today) => [today.subtract(6, 'day'), today] },
  { key: 'last30', label: '近 30 天', range: (today) => [today.subtract(29, 'day'), today] },
  { key: 'thisMonth', label: '本月', range: (today) => [today.startOf('month'), today] },
  {
    key: 'lastMonth',
    label: '上月',
    range: (today) => {
      const last = today.startOf('month').subtract(1, 'month');
      return [last, last.endOf('month').startOf('day')];
    },
  },
];

const LAST_7_DAYS = RANGE_PRESETS.find((preset) => preset.key === 'last7') as RangePreset;

/** The filters a report page keeps in its URL besides the range. */
export const REPORT_FILTER_KEYS = ['assistantId', 'lineNumber', 'flowId', 'knowledgeBaseId'] as const;
export type ReportFilterKey = (typeof REPORT_FILTER_KEYS)[number];

export type ReportQuery = {
  from: string;
  to: string;
  granularity: 'auto' | 'hour' | 'day';
} & Partial<Record<ReportFilterKey, string>>;

export type ReportQueryState = { ok: true; query: ReportQuery } | { ok: false; message: string };

/**
 * The page's report query from its URL. Without a range the page shows the last 7 days; a range
 * someone typed or pasted wrong is reported with the contract's own message rather than guessed.
 */
export function reportQueryFromSearch(search: URLSearchParams, today = chinaToday()): ReportQueryState {
  const [defaultFrom, defaultTo] = LAST_7_DAYS.range(today);
  const raw: Record<string, string> = {
    from: search.get('from') ?? defaultFrom.format(DAY_FORMAT),
    to: search.get('to') ?? defaultTo.format(DAY_FORMAT),
    granularity: search.get('granularity') ?? 'auto',
  };
  for (const key of REPORT_FILTER_KEYS) {
    const value = search.get(key);
    if (value) raw[key] = value;
  }
  // knowledgeBaseId belongs to the knowledge report only; the shared schema does not know it.
  const { knowledgeBaseId, ...shared } = raw;
  const parsed = reportRangeQuery.safeParse(shared);
  if (!parsed.success) return { ok: false, message: parsed.error.issues[0]?.message ?? '日期范围无效' };
  const query: ReportQuery = {
    from: parsed.data.from,
    to: parsed.data.to,
    granularity: parsed.data.granularity,
  };
  for (const key of REPORT_FILTER_KEYS) if (raw[key]) query[key] = raw[key];
  if (knowledgeBaseId) query.knowledgeBaseId = knowledgeBaseId;
  return { ok: true, query };
}

/** Days in an inclusive range. */
export const rangeDays = (from: Dayjs, to: Dayjs) => to.startOf('day').diff(from.startOf('day'), 'day') + 1;

export const RANGE_TOO_LONG = `日期范围不能超过 ${REPORT_MAX_DAYS} 天`;

/** The call-record list showing the calls behind a figure. */
export const drillHref = (drill: ReportDrill): string => callListHref(drill);

/** A call's detail page, scrolled to and marking the turn when one is given. */
export function callDetailHref(callId: string, turnIndex?: number): string {
  const base = `/call-record/detail/${encodeURIComponent(callId)}`;
  return turnIndex === undefined ? base : `${base}?turn=${turnIndex}`;
}
