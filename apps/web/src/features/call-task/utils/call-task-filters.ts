import type { EndReason, TaskState } from '@callpilot/contracts';
import type { CachedDateRange } from '@/lib/list-cache';

/** The list's filters as they are cached (plain JSON: the date range as ISO strings). */
export type CallTaskFilters = {
  name?: string;
  state?: TaskState;
  assistantId?: string;
  created?: CachedDateRange;
};

export const TASK_PAGE_SIZE = 20;
export const CONTACT_PAGE_SIZE = 20;
export const TASK_CALL_PAGE_SIZE = 20;

export function toTaskQuery(filters: CallTaskFilters): Record<string, string> {
  const query: Record<string, string> = {};
  const name = filters.name?.trim();
  if (name) query.name = name;
  if (filters.state) query.state = filters.state;
  if (filters.assistantId) query.assistantId = filters.assistantId;
  if (filters.created) {
    query.from = filters.created.from;
    query.to = filters.created.to;
  }
  return query;
}

export type GradeFilter = 'A' | 'B' | 'C' | 'D' | 'none';

/** The call records list's filters that make sense inside one task. */
export type TaskCallFilters = {
  range?: CachedDateRange;
  endReason: EndReason[];
  intentGrade: GradeFilter[];
  number?: string;
  talkMin?: number;
  talkMax?: number;
};

export const emptyTaskCallFilters = (): TaskCallFilters => ({ endReason: [], intentGrade: [] });

export function toTaskCallQuery(filters: TaskCallFilters): Record<string, string> {
  const query: Record<string, string> = {};
  if (filters.range) {
    query.from = filters.range.from;
    query.to = filters.range.to;
  }
  if (filters.endReason.length > 0) query.endReason = filters.endReason.join(',');
  if (filters.intentGrade.length > 0) query.intentGrade = filters.intentGrade.join(',');
  const number = filters.number?.trim();
  if (number) query.number = number;
  if (filters.talkMin !== undefined) query.talkMin = String(filters.talkMin);
  if (filters.talkMax !== undefined) query.talkMax = String(filters.talkMax);
  return query;
}
