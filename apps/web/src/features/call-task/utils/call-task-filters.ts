import type { TaskState } from '@callpilot/contracts';
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
