import type { TaskPreflight } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { taskKeys, taskUrl } from './call-task-query-keys';

export function getCallTaskPreflight(projectId: string, taskId: string): Promise<TaskPreflight> {
  return get<TaskPreflight>(taskUrl(projectId, taskId, '/preflight'));
}

export const callTaskPreflightQueryOptions = (projectId: string, taskId: string) =>
  queryOptions({
    queryKey: taskKeys.preflight(projectId, taskId),
    queryFn: () => getCallTaskPreflight(projectId, taskId),
    // Balance and contacts change under it; the check is only worth something when fresh.
    staleTime: 0,
  });

export function useCallTaskPreflight(projectId: string | undefined, taskId: string | undefined) {
  return useQuery({
    ...callTaskPreflightQueryOptions(projectId ?? '', taskId ?? ''),
    enabled: Boolean(projectId && taskId),
  });
}
