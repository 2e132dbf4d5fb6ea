import type { TaskDetail } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { taskKeys, taskUrl } from './call-task-query-keys';

export function getCallTask(projectId: string, taskId: string): Promise<TaskDetail> {
  return get<TaskDetail>(taskUrl(projectId, taskId));
}

export const callTaskQueryOptions = (projectId: string, taskId: string) =>
  queryOptions({
    queryKey: taskKeys.detail(projectId, taskId),
    queryFn: () => getCallTask(projectId, taskId),
  });

export function useCallTask(projectId: string | undefined, taskId: string | undefined) {
  return useQuery({
    ...callTaskQueryOptions(projectId ?? '', taskId ?? ''),
    enabled: Boolean(projectId && taskId),
  });
}
