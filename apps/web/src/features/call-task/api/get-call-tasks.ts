import type { Paged, TaskSummary } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { type CallTaskFilters, toTaskQuery } from '../utils/call-task-filters';
import { taskKeys, tasksUrl } from './call-task-query-keys';

export type CallTaskListParams = { filters: CallTaskFilters; page: number; pageSize: number };

export function getCallTasks(
  projectId: string,
  { filters, page, pageSize }: CallTaskListParams,
): Promise<Paged<TaskSummary>> {
  return get<Paged<TaskSummary>>(tasksUrl(projectId), {
    params: { ...toTaskQuery(filters), page, pageSize },
  });
}

export const callTasksQueryOptions = (projectId: string, params: CallTaskListParams) =>
  queryOptions({
    queryKey: [...taskKeys.lists(projectId), params],
    queryFn: () => getCallTasks(projectId, params),
    placeholderData: keepPreviousData,
  });

/** While a task on the page is dialling, its progress is refreshed this often. */
export const TASK_LIST_LIVE_REFRESH_MS = 10_000;

export function useCallTasks(projectId: string | undefined, params: CallTaskListParams) {
  return useQuery({
    ...callTasksQueryOptions(projectId ?? '', params),
    enabled: Boolean(projectId),
    refetchInterval: (query) =>
      query.state.data?.items.some((task) => task.state === 'running' || task.state === 'pending')
        ? TASK_LIST_LIVE_REFRESH_MS
        : false,
  });
}
