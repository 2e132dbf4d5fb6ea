// Issue #16 budget. `webhooks`: the real outbox and dispatcher (enqueue statements, SKIP LOCKED
// claims and leases, signing, undici sends, batched attempt records) on the embedded database,
// 1,000 events a second for 30 s into a local receiver in its own process, with the dispatcher
// stopped and a new one started on the same database halfway: delivery p95 (receipt minus the
// event's own timestamp) at most 1 s, none lost and none delivered twice (by webhook-id).
// Baseline, measured in the same run: the same receiver hit directly by a loop at the same rate.
// With BENCH_DATABASE_URL (or a local PostgreSQL to start), the same run on PostgreSQL with the
// dispatcher in real worker processes, restarted by starting a second worker and stopping the first.
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { PGlite } from '@electric-sql/pglite';
import type { FastifyBaseLogger } from 'fastify';
import { Agent, request } from 'undici';
import { type DatabaseHandle, openDatabase } from '../../apps/server/src/db/client';
import { projects, webhookDeliveries, webhookEndpoints } from '../../apps/server/src/db/schema';
import { systemClock } from '../../apps/server/src/engine/clock';
import { encryptSecret } from '../../apps/server/src/lib/secret-box';
import { WebhookDispatcher } from '../../apps/server/src/modules/webhooks/webhook-dispatcher';
import { WebhookOutbox } from '../../apps/server/src/modules/webhooks/webhook-outbox';
import { createWebhookSender } from '../../apps/server/src/modules/webhooks/webhook-sender';
import {
  generateWebhookSecret,
  webhookHeaders,
} from '../../apps/server/src/modules/webhooks/webhook-signing';
import { repoRoot, serverEntry } from './lib/paths';
import { startPostgres } from './lib/pg';
import {
  type Child,
  freePort,
  httpRequest,
  type Scope,
  spawnNode,
  tempDir,
  waitForOk,
  withScope,
} from './lib/proc';
import { type BudgetResult, budget, fmtInt, fmtMs, fmtRatio, skipped, table } from './lib/report';
import { serverEnv } from './lib/server';

const RATE = Number(process.env.BENCH_WEBHOOKS_RATE ?? 1000);
const DURATION_S = Number(process.env.BENCH_WEBHOOKS_SECONDS ?? 30);
const BASELINE_S = 10;
const P95_BUDGET_MS = 1000;
/** Enqueues in flight at once: many writers (calls, tasks) enqueue concurrently in a real server. */
const WRITERS = 50;
const APP_SECRET = 'bench-webhooks-app-secret-0123456789abcdef';

/**
 * The customer's receiver: answers 200 at once, counts each webhook-id and the delay from the
 * event's timestamp to its arrival. Its own process, so the server side does not share its event loop.
 */
const RECEIVER = `
const http = require('node:http');
let seen = new Map();
let latencies = [];
http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    const sorted = Float64Array.from(latencies).sort();
    const at = (q) => sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0;
    let duplicates = 0;
    for (const n of seen.values()) duplicates += n - 1;
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end(JSON.stringify({ received: latencies.length, unique: seen.size, duplicates,
      p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted.length ? sorted[sorted.length - 1] : 0 }));
  }
  if (req.method === 'POST' && req.url === '/reset') { seen = new Map(); latencies = []; return res.end('ok'); }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    const id = req.headers['webhook-id'];
    seen.set(id, (seen.get(id) || 0) + 1);
    try { latencies.push(now - Date.parse(JSON.parse(Buffer.concat(chunks).toString()).timestamp)); } catch {}
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

interface ReceiverStats {
  received: number;
  unique: number;
  duplicates: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** A call.ended as the repository would send it: the real payload's size. */
const callData = (i: number) => ({
  id: randomUUID(),
  direction: 'outbound' as const,
  callerNumber: '02160881001',
  calleeNumber: `1380013${String(i % 10_000).padStart(4, '0')}`,
  taskId: 'task_bench',
  taskName: '会员续费回访',
  contactId: `ct_${i}`,
  contactName: '张先生',
  assistantId: 'ast_bench',
  assistantName: '会员续费助手',
  assistantVersion: 3,
  status: 'ended' as const,
  endReason: 'completed' as const,
  hangupBy: 'assistant' as const,
  startedAt: new Date().toISOString(),
  answeredAt: new Date().toISOString(),
  endedAt: new Date().toISOString(),
  talkSeconds: 102,
  turnCount: 9,
  intentGrade: 'A' as const,
  machineGrade: 'A' as const,
  humanGrade: null,
  tags: ['有意向'],
  summary: '客户同意续费年卡，约定周五下午再确认支付方式。',
  recording: 'pending' as const,
});

async function startReceiver(scope: Scope) {
  const port = await freePort();
  const child = spawnNode(scope, 'webhook receiver', ['-e', RECEIVER], {
    cwd: repoRoot,
    env: { ...process.env, PORT: String(port) },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitForOk(`${base}/stats`, child, { timeoutMs: 10_000 });
  return {
    url: `${base}/hooks`,
    stats: async () => JSON.parse((await httpRequest(`${base}/stats`)).body) as ReceiverStats,
    reset: () => httpRequest(`${base}/reset`, { method: 'POST' }),
  };
}

/**
 * Calls `emit(i)` RATE times a second for `seconds`, at most WRITERS at once (a writer that
 * falls behind catches up: the count follows the wall clock). Answers how many were emitted.
 */
async function paced(
  seconds: number,
  emit: (i: number) => Promise<unknown>,
  onSecond?: (s: number) => Promise<void>,
) {
  const started = performance.now();
  let emitted = 0;
  let inFlight = 0;
  let failures = 0;
  let nextSecond = 1;
  const pending = new Set<Promise<unknown>>();
  while (performance.now() - started < seconds * 1000) {
    const elapsed = performance.now() - started;
    if (onSecond && elapsed >= nextSecond * 1000) {
      await onSecond(nextSecond);
      nextSecond += 1;
    }
    const due = Math.min(Math.floor((elapsed / 1000) * RATE), seconds * RATE);
    while (emitted < due && inFlight < WRITERS) {
      const i = emitted++;
      inFlight += 1;
      const work = emit(i)
        .catch(() => {
          failures += 1;
        })
        .finally(() => {
          inFlight -= 1;
          pending.delete(work);
        });
      pending.add(work);
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  // The last millisecond's share.
  while (emitted < seconds * RATE) {
    const i = emitted++;
    pending.add(
      emit(i).catch(() => {
        failures += 1;
      }),
    );
  }
  await Promise.allSettled([...pending]);
  return { emitted, failures, seconds: (performance.now() - started) / 1000 };
}

async function waitDelivered(
  receiver: Awaited<ReturnType<typeof startReceiver>>,
  expected: number,
  timeoutMs: number,
) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const stats = await receiver.stats();
    if (stats.unique >= expected || performance.now() > deadline) return stats;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function seedEndpoint(db: DatabaseHandle['db'], url: string) {
  const projectId = randomUUID();
  await db.insert(projects).values({ id: projectId, name: '基准项目' });
  await db.insert(webhookEndpoints).values({
    id: randomUUID(),
    projectId,
    url,
    events: ['call.ended'],
    secret: encryptSecret(APP_SECRET, generateWebhookSecret()),
  });
  return projectId;
}

interface Run {
  label: string;
  emitted: number;
  enqueueFailures: number;
  rate: number;
  stats: ReceiverStats;
  restartMs: number;
  unsettled: number;
}

async function baseline(receiver: Awaited<ReturnType<typeof startReceiver>>) {
  await receiver.reset();
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  const secret = generateWebhookSecret();
  const result = await paced(BASELINE_S, async (i) => {
    const body = JSON.stringify({
      type: 'call.ended',
      timestamp: new Date().toISOString(),
      data: callData(i),
    });
    const headers = webhookHeaders([secret], `msg_direct_${i}`, Math.floor(Date.now() / 1000), body);
    const res = await request(receiver.url, { method: 'POST', headers, body, dispatcher: agent });
    await res.body.dump();
  });
  const stats = await waitDelivered(receiver, result.emitted, 10_000);
  await agent.close();
  return { ...result, stats };
}

/** The embedded database, the dispatcher in this process, restarted (stopped, a new one started) halfway. */
async function onPglite(receiver: Awaited<ReturnType<typeof startReceiver>>): Promise<Run> {
  await receiver.reset();
  const database = await openDatabase({ kind: 'pglite', client: await PGlite.create() });
  try {
    await database.migrate();
    const projectId = await seedEndpoint(database.db, receiver.url);
    const outbox = new WebhookOutbox(database.db, systemClock);
    const sender = createWebhookSender({ allowPrivate: true });
    const log = {
      warn: (...args: unknown[]) => console.log('  warn:', ...args),
      info: () => {},
    } as unknown as Pick<FastifyBaseLogger, 'warn' | 'info'>;
    const dispatcher = (owner: string) =>
      new WebhookDispatcher({
        db: database.db,
        outbox,
        secret: APP_SECRET,
        owner,
        sender,
        email: { send: async () => {} },
        log,
        vacuum: true,
      });
    let current = dispatcher('process-1');
    current.start();
    let restartMs = 0;
    const result = await paced(
      DURATION_S,
      (i) => outbox.enqueue(projectId, 'call.ended', callData(i)),
      async (second) => {
        if (second !== Math.floor(DURATION_S / 2)) return;
        const t0 = performance.now();
        // What a restart does: the old one finishes and records what it sent, a new one takes over.
        await current.stop();
        current = dispatcher('process-2');
        current.start();
        restartMs = performance.now() - t0;
      },
    );
    const stats = await waitDelivered(receiver, result.emitted, 60_000);
    await current.stop();
    await sender.close();
    const rows = await database.db.select({ status: webhookDeliveries.status }).from(webhookDeliveries);
    return {
      label: 'outbox on PGlite (in-process dispatcher restarted)',
      emitted: result.emitted,
      enqueueFailures: result.failures,
      rate: result.emitted / result.seconds,
      stats,
      restartMs,
      unsettled: rows.filter((r) => r.status !== 'succeeded').length,
    };
  } finally {
    await database.close();
  }
}

/**
 * PostgreSQL, the dispatcher in real worker processes (ROLE=worker), this process only enqueueing
 * (NOTIFY wakes the workers). Halfway a second worker starts and the first is stopped (SIGTERM),
 * as a rolling restart does; both share the outbox through SKIP LOCKED meanwhile.
 */
async function onPostgres(scope: Scope, receiver: Awaited<ReturnType<typeof startReceiver>>): Promise<Run> {
  await receiver.reset();
  const pg = await startPostgres(scope);
  const database = await openDatabase({ kind: 'postgres', url: pg.url, poolSize: 10 });
  scope.defer(() => database.close());
  await database.migrate();
  await database.db.delete(webhookDeliveries);
  const projectId = await seedEndpoint(database.db, receiver.url);
  const outbox = new WebhookOutbox(database.db, systemClock);
  const worker = async (name: string): Promise<Child> => {
    const port = await freePort();
    const child = spawnNode(scope, name, [serverEntry], {
      cwd: repoRoot,
      env: serverEnv(tempDir(scope, name), port, {
        ROLE: 'worker',
        DATABASE_URL: pg.url,
        APP_SECRET,
        WEBHOOK_ALLOW_PRIVATE: 'true',
        DEMO: 'off',
      }),
    });
    await waitForOk(`http://127.0.0.1:${port}/healthz`, child, { timeoutMs: 60_000 });
    return child;
  };
  const first = await worker('worker-1');
  let restartMs = 0;
  let restart: Promise<void> | null = null;
  const result = await paced(
    DURATION_S,
    (i) => outbox.enqueue(projectId, 'call.ended', callData(i)),
    async (second) => {
      if (second !== Math.floor(DURATION_S / 2)) return;
      // In the background: the enqueue loop must not wait for a process to boot.
      restart = (async () => {
        const t0 = performance.now();
        await worker('worker-2');
        await first.stop(30_000);
        restartMs = performance.now() - t0;
      })();
    },
  );
  await restart;
  const stats = await waitDelivered(receiver, result.emitted, 60_000);
  const rows = await database.db.select({ status: webhookDeliveries.status }).from(webhookDeliveries);
  return {
    label: 'outbox on PostgreSQL (worker processes, rolling restart)',
    emitted: result.emitted,
    enqueueFailures: result.failures,
    rate: result.emitted / result.seconds,
    stats,
    restartMs,
    unsettled: rows.filter((r) => r.status !== 'succeeded').length,
  };
}

function verdicts(run: Run, base: ReceiverStats): BudgetResult[] {
  const lost = run.emitted - run.stats.unique;
  return [
    budget(
      `webhooks: ${run.label}: delivery p95 <= ${P95_BUDGET_MS} ms at ${fmtInt(RATE)}/s`,
      run.stats.p95 <= P95_BUDGET_MS && run.rate >= RATE * 0.95,
      `p95 ${fmtMs(run.stats.p95)} (direct ${fmtMs(base.p95)}, ${fmtRatio(run.stats.p95 / Math.max(1, base.p95))}), ` +
        `enqueued ${fmtInt(run.rate)}/s`,
    ),
    budget(
      `webhooks: ${run.label}: 0 lost, 0 duplicated across the restart`,
      lost === 0 && run.stats.duplicates === 0 && run.enqueueFailures === 0 && run.unsettled === 0,
      `${fmtInt(run.emitted)} events, ${fmtInt(run.stats.unique)} delivered, ${lost} lost, ` +
        `${run.stats.duplicates} duplicated, ${run.unsettled} not settled, restart ${fmtMs(run.restartMs)}`,
    ),
  ];
}

export async function webhooksBenchmark(): Promise<BudgetResult[]> {
  console.log(
    `  ${fmtInt(RATE)} events/s for ${DURATION_S} s (baseline ${BASELINE_S} s), receiver in its own process,\n` +
      `  latency = arrival - the event's timestamp; ${os.availableParallelism()} core(s) shared by all.`,
  );
  return withScope(async (scope) => {
    const receiver = await startReceiver(scope);
    const direct = await baseline(receiver);
    const runs: Run[] = [await onPglite(receiver)];
    let pgNote: BudgetResult | null = null;
    try {
      runs.push(await onPostgres(scope, receiver));
    } catch (err) {
      pgNote = skipped(
        'webhooks: outbox on PostgreSQL',
        `not measured: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
      );
    }
    const rows = [
      [
        'direct loop, no outbox (baseline)',
        fmtInt(direct.emitted / direct.seconds),
        fmtInt(direct.stats.unique),
        '0',
        String(direct.stats.p50),
        String(direct.stats.p95),
        String(direct.stats.p99),
        String(direct.stats.max),
        '1.00x',
      ],
      ...runs.map((r) => [
        r.label,
        fmtInt(r.rate),
        fmtInt(r.stats.unique),
        String(r.stats.duplicates),
        String(r.stats.p50),
        String(r.stats.p95),
        String(r.stats.p99),
        String(r.stats.max),
        fmtRatio(r.stats.p95 / Math.max(1, direct.stats.p95)),
      ]),
    ];
    console.log(
      table(
        ['run', 'events/s', 'delivered', 'dup', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms', 'p95 vs direct'],
        rows,
      ),
    );
    return [...runs.flatMap((r) => verdicts(r, direct.stats)), ...(pgNote ? [pgNote] : [])];
  });
}
