import type { TaskEvent } from '@callpilot/contracts';
import { useEffect, useRef } from 'react';
import { getEventStream } from '@/lib/request/get-event-stream';
import { tasksUrl } from './call-task-query-keys';

/** A dropped stream (deploy, proxy timeout) is reopened after this pause while the page stays open. */
export const TASK_EVENTS_RECONNECT_MS = 3000;

export function streamTaskEvents(
  projectId: string,
  { taskId, signal, onEvent }: { taskId?: string; signal: AbortSignal; onEvent: (event: TaskEvent) => void },
): Promise<void> {
  // Live counts are a bonus on top of the loaded page: their failures must not toast every 3 s.
  return getEventStream<TaskEvent>(tasksUrl(projectId, '/events'), {
    params: { taskId },
    signal,
    onEvent,
    showError: false,
  });
}

/**
 * Follows a task's live counts (or every task's) while `enabled`, reconnecting when the stream
 * ends. The latest `onEvent` is always used, so callers need not memoise it.
 */
export function useTaskEvents(
  projectId: string | undefined,
  {
    taskId,
    enabled = true,
    onEvent,
  }: { taskId?: string; enabled?: boolean; onEvent: (event: TaskEvent) => void },
) {
  const handler = useRef(onEvent);
  handler.current = onEvent;

  useEffect(() => {
    if (!projectId || !enabled) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const connect = () => {
      streamTaskEvents(projectId, {
        ...(taskId ? { taskId } : {}),
        signal: controller.signal,
        onEvent: (event) => handler.current(event),
      })
        .catch(() => undefined)
        .finally(() => {
          if (!controller.signal.aborted) timer = setTimeout(connect, TASK_EVENTS_RECONNECT_MS);
        });
    };
    connect();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [projectId, taskId, enabled]);
}
