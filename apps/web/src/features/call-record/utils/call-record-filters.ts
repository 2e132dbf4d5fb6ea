import type { CallDirection, EndReason } from '@callpilot/contracts';
import dayjs from 'dayjs';
import type { CachedDateRange } from '@/lib/list-cache';

export type GradeFilter = 'A' | 'B' | 'C' | 'D' | 'none';
export type CallSortField = 'startedAt' | 'talkSeconds' | 'turnCount';
export type SortOrder = 'asc' | 'desc';

/** The list's filters as they are cached (plain JSON: the date range as ISO strings). */
export type CallRecordFilters = {
  range?: CachedDateRange;
  direction?: CallDirection;
  endReason: EndReason[];
  intentGrade: GradeFilter[];
  assistantId?: string;
  number?: string;
  talkMin?: number;
  talkMax?: number;
  tags: string[];
  sort: CallSortField;
  order: SortOrder;
};

export const CALL_PAGE_SIZE = 20;

/**
 * The last 7 days, up to the end of today rather than "now", so a call started while the list is
 * open still falls inside the range and shows up live.
 */
export function defaultCallFilters(now = dayjs()): CallRecordFilters {
  return {
    range: {
      from: now.subtract(6, 'day').startOf('day').toISOString(),
      to: now.endOf('day').toISOString(),
    },
    endReason: [],
    intentGrade: [],
    tags: [],
    sort: 'startedAt',
    order: 'desc',
  };
}

/** The query string of the list, the export and previous/next (lists comma-separated, empties left out). */
export function toCallQuery(filters: CallRecordFilters): Record<string, string> {
  const query: Record<string, string> = {};
  if (filters.range) {
    query.from = filters.range.from;
    query.to = filters.range.to;
  }
  if (filters.direction) query.direction = filters.direction;
  if (filters.endReason.length > 0) query.endReason = filters.endReason.join(',');
  if (filters.intentGrade.length > 0) query.intentGrade = filters.intentGrade.join(',');
  if (filters.assistantId) query.assistantId = filters.assistantId;
  const number = filters.number?.trim();
  if (number) query.number = number;
  if (filters.talkMin !== undefined) query.talkMin = String(filters.talkMin);
  if (filters.talkMax !== undefined) query.talkMax = String(filters.talkMax);
  if (filters.tags.length > 0) query.tags = filters.tags.join(',');
  query.sort = filters.sort;
  query.order = filters.order;
  return query;
}
