import type { CallDetail, CallEvent } from '@callpilot/contracts';
import { get } from '@/lib/request';
import { getEventStream } from '@/lib/request/get-event-stream';
import { projectUrl } from './assistant-query-keys';

/** Streams one call's events until the server closes the stream or `signal` aborts. */
export function followTestCall(
  projectId: string,
  callId: string,
  { signal, onEvent }: { signal: AbortSignal; onEvent: (event: CallEvent) => void },
): Promise<void> {
  return getEventStream<CallEvent>(projectUrl(projectId, '/calls/events'), {
    params: { callId },
    signal,
    onEvent,
  });
}

/**
 * The call as recorded so far. The call starts before its stream is opened, so its first events
 * (started, even the opening line) may have been sent already; this catches up on them.
 */
export function getTestCall(projectId: string, callId: string, signal: AbortSignal): Promise<CallDetail> {
  return get<CallDetail>(projectUrl(projectId, `/calls/${encodeURIComponent(callId)}`), {
    signal,
    showError: false,
    showLoading: false,
  });
}
