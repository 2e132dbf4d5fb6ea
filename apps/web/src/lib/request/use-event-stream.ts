import { useEffect, useRef } from 'react';
import { getEventStream } from './get-event-stream';

/** A dropped stream (deploy, proxy timeout) is reopened after this pause while the page stays open. */
export const EVENT_STREAM_RECONNECT_MS = 3000;

/**
 * Follows a server-sent event stream while `enabled` and `url` is set, reconnecting when it ends.
 * Live updates are a bonus on top of the loaded page, so their failures never toast. The latest
 * `onEvent` is always used: callers need not memoise it.
 */
export function useEventStream<E>(
  url: string | undefined,
  {
    params,
    enabled = true,
    onEvent,
  }: { params?: Record<string, string | undefined>; enabled?: boolean; onEvent: (event: E) => void },
) {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  // Params by value: a new object with the same entries must not reconnect.
  const paramsKey = JSON.stringify(params ?? {});

  useEffect(() => {
    if (!url || !enabled) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const query = Object.fromEntries(
      Object.entries(JSON.parse(paramsKey) as Record<string, string | undefined>).filter(([, v]) => v),
    );
    const connect = () => {
      getEventStream<E>(url, {
        params: query,
        signal: controller.signal,
        onEvent: (event) => handler.current(event),
        showError: false,
      })
        .catch(() => undefined)
        .finally(() => {
          if (!controller.signal.aborted) timer = setTimeout(connect, EVENT_STREAM_RECONNECT_MS);
        });
    };
    connect();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [url, paramsKey, enabled]);
}
