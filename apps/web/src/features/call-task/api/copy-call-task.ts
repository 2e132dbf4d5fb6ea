import type { TaskDetail } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { taskKeys, taskUrl } from './call-task-query-keys';

/** A new draft "<name> 副本" with the same settings and contacts, statuses reset. */
export function copyCallTask(projectId: string, taskId: string): Promise<TaskDetail> {
  return post<TaskDetail>(taskUrl(projectId, taskId, '/copy'));
}

export function useCopyCallTask(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (taskId: string) => copyCallTask(projectId, taskId),
    onSuccess: (copy) => {
      queryClient.setQueryData(taskKeys.detail(projectId, copy.id), copy);
      void queryClient.invalidateQueries({ queryKey: taskKeys.lists(projectId) });
    },
  });
}
