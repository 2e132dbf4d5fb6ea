import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  WEBHOOK_DISABLE_AFTER_MS,
  WEBHOOK_DROPPED_ERROR,
  WEBHOOK_RETRY_DELAYS_MS,
} from '@callpilot/contracts';
import { and, asc, eq } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, seedUser } from '../../../test/helpers';
import type { DatabaseHandle } from '../../db/client';
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../db/schema';
import { hostVerdict } from '../../lib/outbound-http';
import { captureProviders } from '../../providers';
import { WEBHOOK_JITTER, WebhookDispatcher } from './webhook-dispatcher';
import { WebhookOutbox } from './webhook-outbox';
import {
  createWebhookSender,
  WEBHOOK_PRIVATE_REFUSED,
  WEBHOOK_REDIRECT_REFUSED,
  type WebhookSender,
} from './webhook-sender';
import { WebhookService } from './webhooks.service';
import {
  type Answer,
  eventually,
  manualClock,
  type Received,
  seedEndpoint,
  startReceiver,
} from './webhooks.test-helper';

const APP_SECRET = 'webhook-dispatcher-test-secret-0123456789';
const silent = { warn: () => {}, info: () => {} };

let database: DatabaseHandle;
let projectId: string;
let clock: ReturnType<typeof manualClock>;
let outbox: WebhookOutbox;
let mail: ReturnType<typeof captureProviders>;
const cleanup: (() => Promise<void>)[] = [];

beforeEach(async () => {
  database = await createTestDatabase();
  ({ projectId } = await seedUser(database.db, { email: 'owner@example.com' }));
  clock = manualClock(Date.parse('2026-03-02T09:00:00Z'));
  outbox = new WebhookOutbox(database.db, clock);
  mail = captureProviders();
});

afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
  await database.close();
});

function dispatcher(
  options: {
    sender?: WebhookSender;
    owner?: string;
    concurrency?: number;
    random?: () => number;
    pendingCap?: number;
  } = {},
) {
  const sender = options.sender ?? createWebhookSender({ allowPrivate: true });
  cleanup.push(() => sender.close());
  const d = new WebhookDispatcher({
    db: database.db,
    outbox,
    secret: APP_SECRET,
    owner: options.owner ?? 'test-process',
    sender,
    email: mail.providers.email,
    log: silent,
    consoleUrl: 'https://call.example.com',
    concurrency: options.concurrency,
    random: options.random,
    pendingCap: options.pendingCap,
  });
  cleanup.push(() => d.stop());
  return d;
}

async function receiver(answer?: (r: Received) => Answer) {
  const r = await startReceiver(answer);
  cleanup.push(r.close);
  return r;
}

const endedCall = (id: string) => ({
  id,
  direction: 'outbound' as const,
  callerNumber: '02160881001',
  calleeNumber: '13800138000',
  taskId: null,
  taskName: null,
  contactId: null,
  contactName: null,
  assistantId: null,
  assistantName: '测试助手',
  assistantVersion: 1,
  status: 'ended' as const,
  endReason: 'completed' as const,
  hangupBy: 'assistant' as const,
  startedAt: new Date(clock.now()).toISOString(),
  answeredAt: null,
  endedAt: null,
  talkSeconds: 0,
  turnCount: 0,
  intentGrade: null,
  machineGrade: null,
  humanGrade: null,
  tags: [],
  summary: '',
  recording: 'none' as const,
});

const deliveries = () => database.db.select().from(webhookDeliveries).orderBy(asc(webhookDeliveries.eventId));
const endpointRow = async (id: string) =>
  (await database.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)))[0]!;

describe('the retry schedule', () => {
  it('retries after the published delays ± 20% jitter, then gives up as failed', async () => {
    const r = await receiver(() => ({ status: 500, body: 'down for maintenance' }));
    await seedEndpoint(database.db, APP_SECRET, { projectId, url: r.url });
    const d = dispatcher();
    await outbox.enqueue(projectId, 'call.ended', endedCall('c-retry'));

    let attemptAt = clock.now();
    expect(await d.runDue()).toBe(1);
    for (let attempt = 1; attempt < WEBHOOK_RETRY_DELAYS_MS.length; attempt++) {
      const [row] = await deliveries();
      expect(row).toMatchObject({ status: 'pending', attempts: attempt, lastStatusCode: 500 });
      const delay = row!.nextAttemptAt!.getTime() - attemptAt;
      const base = WEBHOOK_RETRY_DELAYS_MS[attempt]!;
      expect(delay).toBeGreaterThanOrEqual(Math.floor(base * (1 - WEBHOOK_JITTER)));
      expect(delay).toBeLessThanOrEqual(Math.ceil(base * (1 + WEBHOOK_JITTER)));
      // Not a moment early.
      clock.set(row!.nextAttemptAt!.getTime() - 1);
      expect(await d.runDue()).toBe(0);
      clock.set(row!.nextAttemptAt!.getTime());
      attemptAt = clock.now();
      expect(await d.runDue()).toBe(1);
    }
    const [done] = await deliveries();
    expect(done).toMatchObject({ status: 'failed', attempts: 10, nextAttemptAt: null });
    expect(r.received).toHaveLength(10);
    // One event: the same webhook-id on every attempt, each signed at its own time.
    expect(new Set(r.ids())).toEqual(new Set([done!.eventId]));
    expect(new Set(r.received.map((x) => x.headers['webhook-timestamp'])).size).toBe(10);
    const attempts = await database.db.select().from(webhookAttempts);
    expect(attempts).toHaveLength(10);
    expect(attempts[0]).toMatchObject({
      trigger: 'auto',
      statusCode: 500,
      responseBody: 'down for maintenance',
    });
    expect(attempts[0]!.error).toBe('接收方返回 HTTP 500');
    clock.advance(30 * 24 * 3600_000);
    expect(await d.runDue()).toBe(0);
  });

  it('marks a 2xx as succeeded and keeps at most 4 KB of the answer', async () => {
    const r = await receiver(() => ({ status: 202, body: 'x'.repeat(10_000) }));
    await seedEndpoint(database.db, APP_SECRET, { projectId, url: r.url });
    const d = dispatcher();
    await outbox.enqueue(projectId, 'call.ended', endedCall('c-ok'));
    await d.runDue();
    const [row] = await deliveries();
    expect(row).toMatchObject({ status: 'succeeded', attempts: 1, lastStatusCode: 202, nextAttemptAt: null });
    const [attempt] = await database.db.select().from(webhookAttempts);
    expect(attempt!.responseBody).toHaveLength(4096);
  });
});

describe('endpoints that stop working', () => {
  it('disables an endpoint answering 410 Gone at once; new events skip it', async () => {
    const r = await receiver(() => ({ status: 410 }));
    const endpoint = await seedEndpoint(database.db, APP_SECRET, { projectId, url: r.url });
    const d = dispatcher();
    await outbox.enqueue(projectId, 'call.ended', endedCall('c-gone'));
    await d.runDue();
    const [row] = await deliveries();
    expect(row).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 410 });
    expect(await endpointRow(endpoint.id)).toMatchObject({ enabled: false, disabledReason: 'gone' });
    expect(await outbox.enqueue(projectId, 'call.ended', endedCall('c-after'))).toBe(0);
    clock.advance(3600_000);
    expect(await d.runDue()).toBe(0);
    expect(r.received).toHaveLength(1);
  });

  it('disables an endpoint failing for 5 days without a success and e-mails the owner', async () => {
    const r = await receiver(() => ({ status: 503 }));
    const endpoint = await seedEndpoint(database.db, APP_SECRET, { projectId, url: r.url });
    const d = dispatcher();
    const firstFailure = clock.now();
    await outbox.enqueue(projectId, 'call.ended', endedCall('c-1'));
    await d.runDue();
    expect((await endpointRow(endpoint.id)).failingSince?.getTime()).toBe(firstFailure);

    // Four days on, still failing: still on.
    clock.set(firstFailure + 4 * 24 * 3600_000);
    await outbox.enqueue(projectId, 'call.ended', endedCall('c-2'));
    await d.runDue();
    expect(await endpointRow(endpoint.id)).toMatchObject({ enabled: true });
    expect(mail.emails).toHaveLength(0);

    // Five days after the first failure, with no success in between: off, and the owner is told.
    clock.set(firstFailure + WEBHOOK_DISABLE_AFTER_MS + 60_000);
    await outbox.enqueue(projectId, 'call.ended', endedCall('c-3'));
    await d.runDue();
    expect(await endpointRow(endpoint.id)).toMatchObject({ enabled: false, disabledReason: 'failing' });
    expect(mail.emails).toHaveLength(1);
    expect(mail.emails[0]!.to).toBe('owner@example.com');
    expect(mail.emails[0]!.subject).toContain('Webhook 接收地址已自动停用');
    expect(mail.emails[0]!.text).toContain(r.url);
    expect(mail.emails[0]!.text).toContain('https://call.example.com/developer-options/webhooks');
    // Its pending retries wait: nothing more is attempted while it is off.
    const sent = r.received.length;
    clock.advance(2 * 24 * 3600_000);
    expect(await d.runDue()).toBe(0);
    expect(r.received).toHaveLength(sent);
  });

  it('a success ends the failure streak', async () => {
    let fail = true;
    const r = await receiver(() => ({ status: fail ? 500 : 200 }));
    const endpoint = await seedEndpoint(database.db, APP_SECRET, { projectId, url: r.url });
    const d = dispatcher();
    await outbox.enqueue(projectId, 'call.ended', endedCall('c-1'));
    await d.runDue();
    expect((await endpointRow(endpoint.id)).failingSince).not.toBeNull();
    fail = false;
    clock.advance(10_000);
    await d.runDue();
    expect((await endpointRow(endpoint.id)).failingSince).toBeNull();
  });
});

describe('outbound safety', () => {
  it('does not follow redirects: a 3xx is a failed attempt and the target is never called', async () => {
    const target = await receiver();
    const r = await receiver(() => ({ status: 302, headers: { location: target.url } }));
    await seedEndpoint(database.db, APP_SECRET, { projectId, url: r.url });
    const d = dispatcher();
    await outbox.enqueue(projectId, 'call.ended', endedCall('c-redirect'));
    await d.runDue();
    const [row] = await deliveries();
    expect(row).toMatchObject({
      status: 'pending',
      lastStatusCode: 302,
      lastError: WEBHOOK_REDIRECT_REFUSED,
    });
    expect(target.received).toHaveLength(0);
  });

  it('refuses private, loopback and link-local addresses at send time, names resolving to them too', async () => {
    const r = await receiver();
    const urls = [
      `http://127.0.0.1:${r.port}/hooks`,
      'http://10.0.0.7/hooks',
      'http://169.254.169.254/latest/meta-data/',
      `http://[::1]:${r.port}/hooks`,
      `http://localhost:${r.port}/hooks`,
      // A name answering a public address to a check and loopback when connecting (rebinding):
      // the connect-time lookup is the one that counts.
      `http://rebind.example.test:${r.port}/hooks`,
    ];
    for (const url of urls) await seedEndpoint(database.db, APP_SECRET, { projectId, url });
    let lookups = 0;
    const resolve = async (host: string) => {
      if (host === 'localhost') return ['127.0.0.1'];
      lookups += 1;
      return lookups === 1 ? ['93.184.216.34'] : ['127.0.0.1'];
    };
    // The check made when the URL is saved sees the public address...
    expect(await hostVerdict(new URL(urls.at(-1)!), { resolve })).toBeNull();
    // ...the connection sees loopback, and is refused there.
    const d = dispatcher({ sender: createWebhookSender({ allowPrivate: false, resolve }) });
    await outbox.enqueue(projectId, 'call.ended', endedCall('c-ssrf'));
    expect(await d.runDue()).toBe(urls.length);
    const rows = await deliveries();
    expect(rows).toHaveLength(urls.length);
    for (const row of rows)
      expect(row).toMatchObject({
        status: 'pending',
        lastStatusCode: null,
        lastError: WEBHOOK_PRIVATE_REFUSED,
      });
    expect(r.received).toHaveLength(0);
  });

  it('refuses a name the system resolver maps to loopback, at connect time', async () => {
    const r = await receiver();
    const sender = createWebhookSender({ allowPrivate: false });
    cleanup.push(() => sender.close());
    const result = await sender.send(
      `http://localhost:${r.port}/hooks`,
      { 'content-type': 'application/json' },
      '{}',
    );
    expect(result).toMatchObject({ statusCode: null, error: WEBHOOK_PRIVATE_REFUSED });
    expect(r.received).toHaveLength(0);
    // Allowed by the operator, the same request goes through.
    const allowed = createWebhookSender({ allowPrivate: true });
    cleanup.push(() => allowed.close());
    expect(await allowed.send(`http://localhost:${r.port}/hooks`, {}, '{}')).toMatchObject({
      statusCode: 200,
      error: null,
    });
  });
});

describe('durability', () => {
  it('sends what a stopped dispatcher left pending with the next one, none twice, every one signed', async () => {
    const r = await receiver(() => ({ status: 200, delayMs: 30 }));
    const endpoint = await seedEndpoint(database.db, APP_SECRET, { projectId, url: r.url });
    // Real time here: the receiver checks signature timestamps against its own clock.
    clock.set(Date.now());
    const tick = setInterval(() => clock.set(Date.now()), 5);
    cleanup.push(async () => clearInterval(tick));
    const first = dispatcher({ owner: 'process-a', concurrency: 4 });
    first.start();
    for (let i = 0; i < 60; i++) await outbox.enqueue(projectId, 'call.ended', endedCall(`c-${i}`));
    await eventually(() => r.received.length >= 10, 10_000, 'first deliveries');
    await first.stop();
    const afterStop = r.received.length;
    const settled = await database.db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.status, 'succeeded')));
    // Everything the first one sent is recorded: nothing is left leased.
    expect(settled).toHaveLength(afterStop);
    const leased = (await deliveries()).filter((d) => d.leaseOwner !== null);
    expect(leased).toHaveLength(0);
    expect(afterStop).toBeLessThan(60);

    // A claim left by a process that died keeps its rows until its lease runs out.
    const [orphan] = (await deliveries()).filter((d) => d.status === 'pending');
    await database.db
      .update(webhookDeliveries)
      .set({ leaseOwner: 'dead-process', leaseUntil: new Date(Date.now() + 300) })
      .where(eq(webhookDeliveries.id, orphan!.id));

    const second = dispatcher({ owner: 'process-b', concurrency: 8 });
    second.start();
    await eventually(
      async () => (await deliveries()).every((d) => d.status === 'succeeded'),
      15_000,
      'all delivered',
    );
    expect(r.received).toHaveLength(60);
    expect(new Set(r.ids()).size).toBe(60);
    const orphanSent = r.received.find((x) => x.headers['webhook-id'] === orphan!.eventId)!;
    expect(orphanSent.at).toBeGreaterThanOrEqual(orphan!.createdAt.getTime());
    const secret = endpoint.secret;
    for (const x of r.received) {
      const headers = Object.fromEntries(
        ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(x.headers[h])]),
      );
      expect(() => new Webhook(secret).verify(x.body, headers)).not.toThrow();
    }
  });
});

/** A receiver that accepts connections and requests and never answers. */
async function hangingReceiver() {
  const sockets = new Set<Socket>();
  let requests = 0;
  const server = http.createServer(() => {
    requests++;
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, requests: () => requests };
}

describe('a receiver that hangs', () => {
  it('times out, retries on the schedule, and the backlog stays within the cap; the dropped are counted', async () => {
    const r = await hangingReceiver();
    const endpoint = await seedEndpoint(database.db, APP_SECRET, { projectId, url: r.url });
    const cap = 5;
    const d = dispatcher({
      sender: createWebhookSender({ allowPrivate: true, timeoutMs: 1000 }),
      pendingCap: cap,
      random: () => 0.5,
    });
    for (let i = 0; i < 12; i++) {
      await outbox.enqueue(projectId, 'call.ended', endedCall(`c-${String(i).padStart(2, '0')}`));
      clock.advance(1000);
    }
    const started = Date.now();
    expect(await d.runDue()).toBe(12);
    // Sent together, each given up after the timeout: not 12 timeouts one after the other.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.requests()).toBe(12);
    for (const row of await deliveries()) {
      expect(row).toMatchObject({ status: 'pending', attempts: 1, lastError: '接收地址 1 秒内未应答' });
      expect(row.nextAttemptAt!.getTime() - clock.now()).toBe(WEBHOOK_RETRY_DELAYS_MS[1]);
    }

    expect(await d.trimBacklog()).toBe(12 - cap);
    const afterTrim = await deliveries();
    const pending = afterTrim.filter((row) => row.status === 'pending');
    expect(pending).toHaveLength(cap);
    const dropped = afterTrim.filter((row) => row.status === 'failed');
    // The oldest go; the newest are kept for when the receiver comes back.
    expect(dropped.map((row) => row.eventId)).toEqual(afterTrim.slice(0, 12 - cap).map((row) => row.eventId));
    for (const row of dropped)
      expect(row).toMatchObject({ lastError: WEBHOOK_DROPPED_ERROR, nextAttemptAt: null });

    // The retry falls due: only the kept ones are tried again.
    clock.advance(WEBHOOK_RETRY_DELAYS_MS[1]);
    expect(await d.runDue()).toBe(cap);
    expect(r.requests()).toBe(12 + cap);

    // Events keep coming while it hangs: the backlog never passes the cap after a trim.
    for (let i = 0; i < 20; i++) await outbox.enqueue(projectId, 'call.ended', endedCall(`later-${i}`));
    await d.trimBacklog();
    const rows = await deliveries();
    expect(rows.filter((row) => row.status === 'pending')).toHaveLength(cap);
    expect(rows.filter((row) => row.lastError === WEBHOOK_DROPPED_ERROR)).toHaveLength(32 - cap);

    // The console's endpoint list shows how many were dropped.
    const service = new WebhookService(database.db, {
      secret: APP_SECRET,
      allowPrivate: true,
      now: () => clock.now(),
    });
    const [listed] = await service.list(projectId);
    expect(listed).toMatchObject({
      id: endpoint.id,
      recent: { pending: cap, failed: 32 - cap, dropped: 32 - cap, succeeded: 0 },
    });
  });
});
