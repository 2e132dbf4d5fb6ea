import type { FastifyReply } from 'fastify';

/** Keeps proxies and browsers from dropping a quiet stream. */
export const SSE_PING_MS = 15_000;

/**
 * Turns a reply into a server-sent event stream of `subscribe`'s events: `data: <json>` per event,
 * a `: ping` comment every 15 s, unsubscribed when the client goes away. `onStop` registers an
 * ending for graceful shutdown, which would otherwise wait on the open connection.
 */
export function streamEvents<E>(
  reply: FastifyReply,
  subscribe: (send: (event: E) => void) => () => void,
  onStop: (end: () => void) => () => void,
): void {
  // Hijacked, the reply skips onSend hooks, so compression cannot hold events back.
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    'X-Accel-Buffering': 'no',
    Connection: 'keep-alive',
  });
  // The subscription exists once this comment arrives, which a client (or a test) can wait for.
  res.write(': connected\n\n');
  const unsubscribe = subscribe((event) => res.write(`data: ${JSON.stringify(event)}\n\n`));
  const ping = setInterval(() => res.write(': ping\n\n'), SSE_PING_MS);
  const close = () => {
    clearInterval(ping);
    unsubscribe();
    forgetStop();
  };
  const forgetStop = onStop(() => {
    close();
    res.end();
  });
  res.on('close', close);
}
