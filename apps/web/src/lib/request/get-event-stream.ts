import { getToken } from '@/lib/auth-token';
import { API_BASE, failRequest, type RequestOptions } from './request-client';

// EventSource cannot send the bearer token, so long-lived GET event streams are read with fetch.

type StreamOptions<E> = Pick<RequestOptions, 'showError' | 'fallbackMessage'> & {
  params?: Record<string, string | undefined>;
  signal?: AbortSignal;
  onEvent: (event: E) => void;
};

function withQuery(url: string, params: Record<string, string | undefined> | undefined): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params ?? {})) if (value) search.set(key, value);
  const query = search.toString();
  return query ? `${url}?${query}` : url;
}

/**
 * GETs a text/event-stream and calls `onEvent` with each `data: <json>` message as it arrives.
 * Resolves when the server closes the stream; rejects when it refuses the call (after the request
 * client's error policy ran) or when `signal` aborts.
 */
export async function getEventStream<E>(
  url: string,
  { params, signal, onEvent, ...options }: StreamOptions<E>,
): Promise<void> {
  const headers = new Headers({ Accept: 'text/event-stream' });
  const token = getToken();
  if (token) headers.set('Authorization', `Bearer ${token}`);
  const target = withQuery(url, params);
  let response: Response;
  try {
    response = await fetch(`${API_BASE}${target}`, { method: 'GET', headers, ...(signal ? { signal } : {}) });
  } catch (error) {
    if (signal?.aborted) throw error;
    return failRequest(url, undefined, undefined, options);
  }
  if (!response.ok) {
    const body: unknown = await response.json().catch(() => undefined);
    return failRequest(url, response.status, body, options);
  }
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const flushLine = (line: string) => {
    // Comment lines (`: ping`) only keep proxies from closing an idle stream.
    if (!line.startsWith('data:')) return;
    const payload = line.slice(5).trim();
    if (payload === '') return;
    let event: E;
    try {
      event = JSON.parse(payload) as E;
    } catch {
      // One malformed message must not end a stream the page depends on.
      return;
    }
    onEvent(event);
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    const lines = buffered.split(/\r?\n/);
    buffered = lines.pop() ?? '';
    for (const line of lines) flushLine(line);
  }
  buffered += decoder.decode();
  flushLine(buffered);
}
