import type { CallEvent } from '@callpilot/contracts';
import { getEventStream } from '@/lib/request/get-event-stream';
import { useEventStream } from '@/lib/request/use-event-stream';
import { callsUrl } from './call-query-keys';

/** Follows the project's call events (or one call's) while `enabled`, reconnecting when dropped. */
export function useCallEvents(
  projectId: string | undefined,
  {
    callId,
    enabled = true,
    onEvent,
  }: { callId?: string; enabled?: boolean; onEvent: (event: CallEvent) => void },
) {
  useEventStream<CallEvent>(projectId ? callsUrl(projectId, '/events') : undefined, {
    params: { callId },
    enabled,
    onEvent,
  });
}

/**
 * Streams one call's events until the server closes the stream (the call is over and analysed) or
 * `signal` aborts. Unlike useCallEvents it does not reconnect: a live-call dialog shows the end.
 */
export function followCall(
  projectId: string,
  callId: string,
  { signal, onEvent }: { signal: AbortSignal; onEvent: (event: CallEvent) => void },
): Promise<void> {
  return getEventStream<CallEvent>(callsUrl(projectId, '/events'), { params: { callId }, signal, onEvent });
}
