import { vi } from 'vitest';

/** A pause in a streamed body: the stream waits for it before sending the next chunk. */
export type StreamGate = Promise<void>;

export type FakeFetchReply =
  | { status: number; json: unknown }
  | { status: number; chunks: (string | Uint8Array | StreamGate)[]; contentType?: string }
  | { status: number; bytes: Uint8Array; contentType: string };

export type RecordedFetch = { method: string; url: string; headers: Headers; body: unknown };

function bodyOf(reply: FakeFetchReply): { body: BodyInit | null; contentType: string } {
  if ('json' in reply) return { body: JSON.stringify(reply.json), contentType: 'application/json' };
  if ('bytes' in reply) return { body: reply.bytes as BodyInit, contentType: reply.contentType };
  const encoder = new TextEncoder();
  const chunks = [...reply.chunks];
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = chunks.shift();
        if (next === undefined) {
          controller.close();
          return;
        }
        if (typeof next === 'string') {
          controller.enqueue(encoder.encode(next));
          return;
        }
        // jsdom's TextEncoder makes arrays of another realm, so no instanceof; copy into this one.
        if (ArrayBuffer.isView(next)) {
          controller.enqueue(new Uint8Array(next.buffer, next.byteOffset, next.byteLength).slice());
          return;
        }
        await next;
      }
    },
  });
  return { body: stream, contentType: reply.contentType ?? 'text/event-stream' };
}

/**
 * Answers `fetch` (used for streamed and binary answers) at the network boundary, like
 * startFakeServer does for the axios client. Restored by vitest's restoreMocks.
 */
export function startFakeFetch(handle: (request: RecordedFetch) => FakeFetchReply | Promise<FakeFetchReply>) {
  const requests: RecordedFetch[] = [];
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const request: RecordedFetch = {
      method: (init?.method ?? 'GET').toUpperCase(),
      url,
      headers: new Headers(init?.headers),
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : init?.body,
    };
    requests.push(request);
    if (init?.signal?.aborted) throw new DOMException('The operation was aborted.', 'AbortError');
    const reply = await handle(request);
    const { body, contentType } = bodyOf(reply);
    return new Response(body, { status: reply.status, headers: { 'content-type': contentType } });
  });
  return { requests };
}

/**
 * A server-sent-events body for `events`, cut into byte chunks at arbitrary points, so lines and
 * even the bytes of one Chinese character arrive split across reads, as they can over a network.
 */
export function sseChunks(events: unknown[], pieces = 3): Uint8Array[] {
  const bytes = new TextEncoder().encode(
    events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join(''),
  );
  const size = Math.ceil(bytes.length / pieces) + 1;
  const chunks: Uint8Array[] = [];
  for (let index = 0; index < bytes.length; index += size) chunks.push(bytes.slice(index, index + size));
  return chunks;
}
