import type { TaskAction, TaskDetail } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { taskKeys, taskUrl } from './call-task-query-keys';

/** start | pause | resume | stop; the server answers 409 with the reason for an illegal one. */
export function runCallTaskAction(
  projectId: string,
  taskId: string,
  action: TaskAction,
): Promise<TaskDetail> {
  return post<TaskDetail>(taskUrl(projectId, taskId, `/actions/${action}`));
}

export function useRunCallTaskAction(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ taskId, action }: { taskId: string; action: TaskAction }) =>
      runCallTaskAction(projectId, taskId, action),
    onSuccess: (task) => {
      queryClient.setQueryData(taskKeys.detail(projectId, task.id), task);
      void queryClient.invalidateQueries({ queryKey: taskKeys.lists(projectId) });
      void queryClient.invalidateQueries({ queryKey: taskKeys.preflight(projectId, task.id) });
    },
  });
}
