import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookEventType } from '@callpilot/contracts';
import type { Database } from '../../db/client';
import { webhookEndpoints } from '../../db/schema';
import type { Clock } from '../../engine/clock';
import { type AppSecret, encryptSecret } from '../../lib/secret-box';
import { generateWebhookSecret } from './webhook-signing';

/** What a receiver got: one entry per request. */
export interface Received {
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Answer = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number };

/**
 * A customer's webhook receiver on loopback: records every request and answers as `answer`
 * says (200 by default), so tests assert what a receiver would see.
 */
export async function startReceiver(answer: (req: Received) => Answer = () => ({ status: 200, body: 'ok' })) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Received = {
        at: Date.now(),
        path: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(entry);
      const reply = answer(entry);
      const send = () => {
        res.writeHead(reply.status, reply.headers ?? {});
        res.end(reply.body ?? '');
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    /** The webhook-id of every request, in arrival order. */
    ids: () => received.map((r) => String(r.headers['webhook-id'])),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An endpoint as the console would store it; answers its id and plain secret. */
export async function seedEndpoint(
  db: Database,
  appSecret: AppSecret,
  options: {
    projectId: string;
    url: string;
    events?: WebhookEventType[];
    enabled?: boolean;
    createdAt?: Date;
  },
): Promise<{ id: string; secret: string }> {
  const secret = generateWebhookSecret();
  const id = randomUUID();
  await db.insert(webhookEndpoints).values({
    id,
    projectId: options.projectId,
    url: options.url,
    events: options.events ?? ['call.ended'],
    enabled: options.enabled ?? true,
    secret: encryptSecret(appSecret, secret),
    createdAt: options.createdAt ?? new Date(),
  });
  return { id, secret };
}

/** Time that moves only when told: the retry schedule over days runs in milliseconds. */
export function manualClock(start = Date.now()) {
  let now = start;
  const clock: Clock & { set(ms: number): void; advance(ms: number): void } = {
    now: () => now,
    sleep: () => Promise.reject(new Error('the manual clock does not sleep')),
    set: (ms) => {
      now = ms;
    },
    advance: (ms) => {
      now += ms;
    },
  };
  return clock;
}

/** Resolves when `check` holds, polling; fails the test after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | false | null | undefined> | T,
  timeoutMs = 10_000,
  label = 'condition',
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
