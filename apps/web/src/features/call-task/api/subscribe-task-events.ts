import type { TaskEvent } from '@callpilot/contracts';
import { useEventStream } from '@/lib/request/use-event-stream';
import { tasksUrl } from './call-task-query-keys';

/** Follows a task's live counts (or every task's) while `enabled`. */
export function useTaskEvents(
  projectId: string | undefined,
  {
    taskId,
    enabled = true,
    onEvent,
  }: { taskId?: string; enabled?: boolean; onEvent: (event: TaskEvent) => void },
) {
  useEventStream<TaskEvent>(projectId ? tasksUrl(projectId, '/events') : undefined, {
    params: { taskId },
    enabled,
    onEvent,
  });
}
