import type { CallDirection, EndReason } from '@callpilot/contracts';
import dayjs from 'dayjs';
import type { CachedDateRange } from '@/lib/list-cache';

export type GradeFilter = 'A' | 'B' | 'C' | 'D' | 'none';
export type CallSortField = 'startedAt' | 'talkSeconds' | 'turnCount';
export type SortOrder = 'asc' | 'desc';

/**
 * The filters of a list of calls, as they are cached or put in a URL (plain JSON: the date range
 * as ISO strings). Each list uses the subset its filter bar shows; sorting belongs to a table.
 */
export type CallFilters = {
  range?: CachedDateRange;
  direction?: CallDirection;
  endReason: EndReason[];
  intentGrade: GradeFilter[];
  assistantId?: string;
  number?: string;
  talkMin?: number;
  talkMax?: number;
  tags: string[];
  sort?: CallSortField;
  order?: SortOrder;
  /**
   * Filters the bar has no control for, arriving from a report's drill-down (数据统计): shown as
   * chips above the list, kept by a new search, cleared one by one or all at once.
   */
  drill?: DrillFilters;
};

/** The list filters only a report's drill-down sets (the server's names and values). */
export const DRILL_FILTER_KEYS = [
  'status',
  'taskId',
  'flowId',
  'assistantVersion',
  'lineNumber',
  'answered',
  'hangupBy',
  'assistantTalked',
  'transferred',
  'humanGraded',
  'waitMin',
  'waitMax',
  'flowNodeId',
  'turnsMin',
  'turnsMax',
] as const;
export type DrillFilterKey = (typeof DRILL_FILTER_KEYS)[number];
export type DrillFilters = Partial<Record<DrillFilterKey, string>>;

const YES_NO: Record<string, string> = { yes: '是', no: '否' };
const STATUS_LABELS: Record<string, string> = { ringing: '振铃中', in_progress: '通话中', ended: '已结束' };
const HANGUP_LABELS: Record<string, string> = { assistant: '小助手', callee: '客户', system: '系统' };

/** The chip of a drill-down filter: its name and value in words. */
export function drillFilterLabel(key: DrillFilterKey, value: string): string {
  switch (key) {
    case 'status':
      return `状态：${STATUS_LABELS[value] ?? value}`;
    case 'taskId':
      return '指定任务';
    case 'flowId':
      return value === 'none' ? '无通话流程' : '指定流程';
    case 'flowNodeId':
      return '经过指定流程节点';
    case 'turnsMin':
      return `对话轮次 ≥ ${value}`;
    case 'turnsMax':
      return `对话轮次 ≤ ${value}`;
    case 'assistantVersion':
      return `小助手版本：v${value}`;
    case 'lineNumber':
      return `线路号码：${value}`;
    case 'answered':
      return `已接通：${YES_NO[value] ?? value}`;
    case 'hangupBy':
      return `挂断方：${HANGUP_LABELS[value] ?? value}`;
    case 'assistantTalked':
      return `小助手接待：${YES_NO[value] ?? value}`;
    case 'transferred':
      return `转人工：${YES_NO[value] ?? value}`;
    case 'humanGraded':
      return `人工复核：${YES_NO[value] ?? value}`;
    case 'waitMin':
      return `等待 ≥ ${value} 秒`;
    case 'waitMax':
      return `等待 ≤ ${value} 秒`;
  }
}

/** A drill-down value the server would accept, so a hand-edited URL cannot break the list. */
function validDrillValue(key: DrillFilterKey, value: string): boolean {
  switch (key) {
    case 'status':
      return value in STATUS_LABELS;
    case 'hangupBy':
      return value in HANGUP_LABELS;
    case 'answered':
    case 'assistantTalked':
    case 'transferred':
    case 'humanGraded':
      return value in YES_NO;
    case 'waitMin':
    case 'waitMax':
    case 'turnsMin':
    case 'turnsMax':
    case 'assistantVersion':
      return wholeSeconds(value) !== undefined;
    case 'lineNumber':
      return /^[0-9+\-*#]{1,32}$/.test(value);
    default:
      return /^[\w-]{1,64}$/.test(value);
  }
}

export const CALL_PAGE_SIZE = 20;

export const emptyCallFilters = (): CallFilters => ({ endReason: [], intentGrade: [], tags: [] });

/**
 * The last 7 days, up to the end of today rather than "now", so a call started while the list is
 * open still falls inside the range and shows up live. Newest first.
 */
export function lastWeekCallFilters(now = dayjs()): CallFilters {
  return {
    ...emptyCallFilters(),
    range: {
      from: now.subtract(6, 'day').startOf('day').toISOString(),
      to: now.endOf('day').toISOString(),
    },
    sort: 'startedAt',
    order: 'desc',
  };
}

/** A cache written by an older console may lack newer keys; the list must still open. */
export const withFilterDefaults = (cached: Partial<CallFilters>): CallFilters => ({
  ...emptyCallFilters(),
  ...cached,
});

const LISTS = ['endReason', 'intentGrade', 'tags'] as const;

/**
 * The query string of a list of calls, its export and previous/next: lists comma-separated,
 * empties left out. The same string is a page's URL state, read back by callFiltersFromQuery.
 */
export function toCallQuery(filters: CallFilters): Record<string, string> {
  const query: Record<string, string> = {};
  if (filters.range) {
    query.from = filters.range.from;
    query.to = filters.range.to;
  }
  if (filters.direction) query.direction = filters.direction;
  for (const key of LISTS) if (filters[key].length > 0) query[key] = filters[key].join(',');
  if (filters.assistantId) query.assistantId = filters.assistantId;
  const number = filters.number?.trim();
  if (number) query.number = number;
  if (filters.talkMin !== undefined) query.talkMin = String(filters.talkMin);
  if (filters.talkMax !== undefined) query.talkMax = String(filters.talkMax);
  if (filters.sort) query.sort = filters.sort;
  if (filters.order) query.order = filters.order;
  for (const key of DRILL_FILTER_KEYS) {
    const value = filters.drill?.[key];
    if (value) query[key] = value;
  }
  return query;
}

const wholeSeconds = (value: string | null) =>
  value !== null && value !== '' && Number.isInteger(Number(value)) && Number(value) >= 0
    ? Number(value)
    : undefined;

/** Reads filters back from a URL's query (what toCallQuery wrote); unknown keys are ignored. */
export function callFiltersFromQuery(params: URLSearchParams): CallFilters {
  const list = (key: (typeof LISTS)[number]) => (params.get(key) ?? '').split(',').filter(Boolean);
  const range = queryRange(params);
  const direction = params.get('direction');
  const assistantId = params.get('assistantId');
  const number = params.get('number');
  const talkMin = wholeSeconds(params.get('talkMin'));
  const talkMax = wholeSeconds(params.get('talkMax'));
  const sort = params.get('sort');
  const order = params.get('order');
  const drill: DrillFilters = {};
  for (const key of DRILL_FILTER_KEYS) {
    const value = params.get(key);
    if (value && validDrillValue(key, value)) drill[key] = value;
  }
  return {
    ...(range ? { range } : {}),
    ...(direction === 'inbound' || direction === 'outbound' ? { direction } : {}),
    endReason: list('endReason') as EndReason[],
    intentGrade: list('intentGrade') as GradeFilter[],
    tags: list('tags'),
    ...(assistantId ? { assistantId } : {}),
    ...(number ? { number } : {}),
    ...(talkMin !== undefined ? { talkMin } : {}),
    ...(talkMax !== undefined ? { talkMax } : {}),
    ...(sort === 'startedAt' || sort === 'talkSeconds' || sort === 'turnCount' ? { sort } : {}),
    ...(order === 'asc' || order === 'desc' ? { order } : {}),
    ...(Object.keys(drill).length > 0 ? { drill } : {}),
  };
}

/** A time range from a URL: both ends, as dates (`from=menu` is where a page was opened from). */
function queryRange(params: URLSearchParams): CachedDateRange | null {
  const from = params.get('from');
  const to = params.get('to');
  return from && to && !Number.isNaN(Date.parse(from)) && !Number.isNaN(Date.parse(to)) ? { from, to } : null;
}

/** Whether a URL's query carries list filters (a report's drill-down link), not only navigation state. */
export const hasCallFilterQuery = (params: URLSearchParams) =>
  queryRange(params) !== null ||
  ['direction', 'endReason', 'intentGrade', 'assistantId', 'number', ...DRILL_FILTER_KEYS].some((key) =>
    params.has(key),
  );
