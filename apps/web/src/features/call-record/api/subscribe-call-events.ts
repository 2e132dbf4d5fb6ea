import type { CallEvent } from '@callpilot/contracts';
import { useEffect, useRef } from 'react';
import { getEventStream } from '@/lib/request/get-event-stream';
import { callsUrl } from './call-record-query-keys';

/** A dropped stream (deploy, proxy timeout) is reopened after this pause while the page stays open. */
export const RECONNECT_DELAY_MS = 3000;

export function streamCallEvents(
  projectId: string,
  { callId, signal, onEvent }: { callId?: string; signal: AbortSignal; onEvent: (event: CallEvent) => void },
): Promise<void> {
  // Live updates are a bonus on top of the loaded page: their failures must not toast every 3 s.
  return getEventStream<CallEvent>(callsUrl(projectId, '/events'), {
    params: { callId },
    signal,
    onEvent,
    showError: false,
  });
}

/**
 * Follows the project's call events (or one call's) while `enabled`, reconnecting when the
 * stream ends. The latest `onEvent` is always used, so callers need not memoise it.
 */
export function useCallEvents(
  projectId: string | undefined,
  {
    callId,
    enabled = true,
    onEvent,
  }: { callId?: string; enabled?: boolean; onEvent: (event: CallEvent) => void },
) {
  const handler = useRef(onEvent);
  handler.current = onEvent;

  useEffect(() => {
    if (!projectId || !enabled) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const connect = () => {
      streamCallEvents(projectId, {
        ...(callId ? { callId } : {}),
        signal: controller.signal,
        onEvent: (event) => handler.current(event),
      })
        .catch(() => undefined)
        .finally(() => {
          if (!controller.signal.aborted) timer = setTimeout(connect, RECONNECT_DELAY_MS);
        });
    };
    connect();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [projectId, callId, enabled]);
}
