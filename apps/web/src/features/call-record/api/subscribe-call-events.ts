import type { CallEvent } from '@callpilot/contracts';
import { useEventStream } from '@/lib/request/use-event-stream';
import { callsUrl } from './call-record-query-keys';

/** Follows the project's call events (or one call's) while `enabled`. */
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
