import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { callKeys } from '@/entities/call/api/call-query-keys';
import { getCalls } from '@/entities/call/api/get-calls';
import { type CallFilters, toCallQuery } from '@/entities/call/utils/call-filters';

export type TaskCallParams = { taskId: string; filters: CallFilters; page: number; pageSize: number };

/** The call records of one task: the records list API filtered by taskId. */
export const taskCallsQueryOptions = (
  projectId: string,
  { taskId, filters, page, pageSize }: TaskCallParams,
) =>
  queryOptions({
    // Under the calls' list key, so the records' writes (grades, tags) refresh this list too.
    queryKey: callKeys.list(projectId, 'task', { taskId, filters, page, pageSize }),
    queryFn: () => getCalls(projectId, { ...toCallQuery(filters), taskId, page, pageSize }),
    placeholderData: keepPreviousData,
  });

export function useTaskCalls(projectId: string | undefined, params: TaskCallParams) {
  return useQuery({
    ...taskCallsQueryOptions(projectId ?? '', params),
    enabled: Boolean(projectId && params.taskId),
  });
}
