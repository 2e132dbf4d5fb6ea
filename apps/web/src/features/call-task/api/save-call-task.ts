import type { TaskDetail, TaskSettings } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post, put } from '@/lib/request';
import { taskKeys, tasksUrl, taskUrl } from './call-task-query-keys';

/** Creates a draft (no id) or rewrites the settings of a draft, pending or paused task. */
export function saveCallTask(projectId: string, taskId: string | undefined, settings: TaskSettings) {
  return taskId
    ? put<TaskDetail>(taskUrl(projectId, taskId), settings)
    : post<TaskDetail>(tasksUrl(projectId), settings);
}

export function useSaveCallTask(projectId: string, taskId: string | undefined) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (settings: TaskSettings) => saveCallTask(projectId, taskId, settings),
    onSuccess: (saved) => {
      queryClient.setQueryData(taskKeys.detail(projectId, saved.id), saved);
      void queryClient.invalidateQueries({ queryKey: taskKeys.lists(projectId) });
      void queryClient.invalidateQueries({ queryKey: taskKeys.preflight(projectId, saved.id) });
    },
  });
}
