import type { CallList } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { type TaskCallFilters, toTaskCallQuery } from '../utils/call-task-filters';
import { projectUrl, taskKeys } from './call-task-query-keys';

export type TaskCallParams = { taskId: string; filters: TaskCallFilters; page: number; pageSize: number };

/** The call records of one task: the records list API filtered by taskId. */
export function getTaskCalls(projectId: string, { taskId, filters, page, pageSize }: TaskCallParams) {
  return get<CallList>(projectUrl(projectId, '/calls'), {
    params: { ...toTaskCallQuery(filters), taskId, page, pageSize },
  });
}

export const taskCallsQueryOptions = (projectId: string, params: TaskCallParams) =>
  queryOptions({
    queryKey: [...taskKeys.calls(projectId), params],
    queryFn: () => getTaskCalls(projectId, params),
    placeholderData: keepPreviousData,
  });

export function useTaskCalls(projectId: string | undefined, params: TaskCallParams) {
  return useQuery({
    ...taskCallsQueryOptions(projectId ?? '', params),
    enabled: Boolean(projectId && params.taskId),
  });
}
