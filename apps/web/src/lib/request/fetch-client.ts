import { getToken } from '@/lib/auth-token';
import { startLoading, stopLoading } from './loading-counter';
import { API_BASE, failRequest, type RequestOptions } from './request-client';

// axios buffers a whole answer before handing it over, so a streamed reply (server-sent events)
// and raw audio go through fetch here, with the request client's base URL, token and error policy.

type FetchOptions = Pick<RequestOptions, 'showError' | 'fallbackMessage'> & { signal?: AbortSignal };

function headersFor(accept: string): Headers {
  const headers = new Headers({ 'Content-Type': 'application/json', Accept: accept });
  const token = getToken();
  if (token) headers.set('Authorization', `Bearer ${token}`);
  return headers;
}

async function readErrorBody(response: Response): Promise<unknown> {
  try {
    return await response.json();
  } catch {
    return undefined;
  }
}

async function postRaw(url: string, body: unknown, accept: string, options: FetchOptions): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(`${API_BASE}${url}`, {
      method: 'POST',
      headers: headersFor(accept),
      body: JSON.stringify(body ?? {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    // A cancelled call (the user reset the chat, the page unmounted) is nobody's failure to report.
    if (options.signal?.aborted) throw error;
    return failRequest(url, undefined, undefined, options);
  }
  if (!response.ok) return failRequest(url, response.status, await readErrorBody(response), options);
  return response;
}

/**
 * POSTs `body` and calls `onEvent` with each `data: <json>` line of the text/event-stream answer,
 * as it arrives. Resolves when the stream ends; rejects with a RequestError (already reported
 * by the error policy) when the server refuses the call.
 */
export async function postEventStream<E>(
  url: string,
  body: unknown,
  { onEvent, ...options }: FetchOptions & { onEvent: (event: E) => void },
): Promise<void> {
  const response = await postRaw(url, body, 'text/event-stream', options);
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const flushLine = (line: string) => {
    // Only `data:` lines carry events; comments (`:`) keep proxies from closing an idle stream.
    if (!line.startsWith('data:')) return;
    const payload = line.slice(5).trim();
    if (payload === '' || payload === '[DONE]') return;
    onEvent(JSON.parse(payload) as E);
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    // stream: true keeps a character split across two chunks whole.
    buffered += decoder.decode(value, { stream: true });
    const lines = buffered.split(/\r?\n/);
    buffered = lines.pop() ?? '';
    for (const line of lines) flushLine(line);
  }
  buffered += decoder.decode();
  flushLine(buffered);
}

/** POSTs `body` and returns the answer's bytes (audio, a file), with the request client's policy. */
export async function postForBlob(url: string, body: unknown, options: FetchOptions = {}): Promise<Blob> {
  startLoading();
  try {
    const response = await postRaw(url, body, '*/*', options);
    return await response.blob();
  } finally {
    stopLoading();
  }
}
