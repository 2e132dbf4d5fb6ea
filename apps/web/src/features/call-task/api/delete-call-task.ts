import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { taskKeys, taskUrl } from './call-task-query-keys';

export function deleteCallTask(projectId: string, taskId: string): Promise<unknown> {
  return del(taskUrl(projectId, taskId));
}

export function useDeleteCallTask(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (taskId: string) => deleteCallTask(projectId, taskId),
    onSuccess: (_answer, taskId) => {
      queryClient.removeQueries({ queryKey: taskKeys.task(projectId, taskId) });
      void queryClient.invalidateQueries({ queryKey: taskKeys.lists(projectId) });
    },
  });
}
