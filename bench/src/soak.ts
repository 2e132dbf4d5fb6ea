// Issue #20 budget. `soak`: the built server on PostgreSQL runs one task at concurrency 200 on the
// simulated carrier for SOAK_MINUTES (default 60), at SIM_TIME_SCALE=SOAK_TIME_SCALE (default 1:
// calls as long as real ones). A probe loaded into the server (lib/soak-probe.mjs) samples its RSS
// and event-loop delay every 10 s. Budgets: no RSS growth trend over the second half (the linear
// regression's growth over that half under 10% of its mean RSS) and event-loop delay p99 ≤ 50 ms.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { eq, sql } from 'drizzle-orm';
import { openDatabase } from '../../apps/server/src/db/client';
import { callTasks } from '../../apps/server/src/db/schema';
import { seedRealTask } from './dialer-real';
import { startPostgres } from './lib/pg';
import { tempDir, withScope } from './lib/proc';
import { type BudgetResult, budget, fmtInt, table } from './lib/report';
import { startServer } from './lib/server';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 60);
const SCALE = Number(process.env.SOAK_TIME_SCALE ?? 1);
const SAMPLE_MS = 10_000;
const P99_BUDGET_MS = 50;
/** Growth the second half's trend may add over that half, as a share of its mean RSS. */
const GROWTH_BUDGET = 0.1;

interface Sample {
  t: number;
  rss: number;
  heapUsed: number;
  p50: number;
  p99: number;
  max: number;
  wholeP99: number;
  /** Calls of the task ended so far (read by the bench at the sample's arrival). */
  ended?: number;
}

const mb = (bytes: number) => bytes / 1024 / 1024;

/** Least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export async function soakBenchmark(): Promise<BudgetResult[]> {
  return withScope(async (scope) => {
    const given = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
    const pg = given ? { url: given } : await startPostgres(scope);
    const probeFile = path.join(tempDir(scope, 'soak'), 'samples.jsonl');
    const probe = pathToFileURL(
      path.join(path.dirname(fileURLToPath(import.meta.url)), 'lib/soak-probe.mjs'),
    ).href;
    const server = await startServer(scope, {
      name: 'soak',
      env: {
        DATABASE_URL: pg.url,
        SIM_TIME_SCALE: String(SCALE),
        DEMO: 'off',
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${probe}`.trim(),
        SOAK_PROBE_FILE: probeFile,
        SOAK_PROBE_MS: String(SAMPLE_MS),
      },
    });
    const handle = await openDatabase({ kind: 'postgres', url: pg.url, poolSize: 2 });
    scope.defer(() => handle.close());
    // Enough contacts that the task never runs dry: 200 slots, calls of ≥ 15 s simulated.
    const contacts = Math.ceil(((MINUTES * 60 * SCALE) / 15) * 200);
    const { taskId } = await seedRealTask(handle, contacts);
    const db = handle.db;
    await db.update(callTasks).set({ state: 'running' }).where(eq(callTasks.id, taskId));
    console.log(
      `  built server on PostgreSQL, SIM_TIME_SCALE=${SCALE}, one task of ${fmtInt(contacts)} contacts at ` +
        `concurrency 200 for ${MINUTES} min; samples every ${SAMPLE_MS / 1000} s`,
    );

    const samples: Sample[] = [];
    const endAt = Date.now() + MINUTES * 60_000;
    let read = 0;
    while (Date.now() < endAt) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      if (server.child.hasExited())
        throw new Error(`the server exited during the soak: ${server.child.output()}`);
      if (!fs.existsSync(probeFile)) continue;
      const lines = fs.readFileSync(probeFile, 'utf8').split('\n').filter(Boolean);
      if (lines.length <= read) continue;
      const ended = (await db.execute(
        sql`select count(*)::int as n from calls where task_id = ${taskId} and status = 'ended'`,
      )) as unknown as { rows: { n: number }[] };
      for (const line of lines.slice(read)) {
        const s = JSON.parse(line) as Sample;
        s.ended = ended.rows[0]?.n ?? 0;
        samples.push(s);
        console.log(
          `  ${(s.t / 1000).toFixed(0).padStart(5)} s  rss ${mb(s.rss).toFixed(1).padStart(7)} MB  heap ` +
            `${mb(s.heapUsed).toFixed(1).padStart(6)} MB  loop delay p50 ${s.p50} p99 ${s.p99} max ${s.max} ms  ` +
            `calls ended ${fmtInt(s.ended)}`,
        );
      }
      read = lines.length;
    }
    const [state] = await db
      .select({ state: callTasks.state })
      .from(callTasks)
      .where(eq(callTasks.id, taskId));
    const live = (await db.execute(
      sql`select count(*)::int as n from task_contacts where task_id = ${taskId} and status = 'dialing'`,
    )) as unknown as { rows: { n: number }[] };
    const [load1 = 0] = os.loadavg();

    if (samples.length < 4) {
      return [budget('soak: RSS and event-loop delay sampled', false, `only ${samples.length} samples`)];
    }
    const secondHalf = samples.slice(Math.floor(samples.length / 2));
    const perMs = slope(secondHalf.map((s) => [s.t, s.rss]));
    const halfMs = (secondHalf.at(-1)?.t ?? 0) - (secondHalf[0]?.t ?? 0);
    const meanRss = secondHalf.reduce((a, s) => a + s.rss, 0) / secondHalf.length;
    const growth = (perMs * halfMs) / meanRss;
    const heapPerMs = slope(secondHalf.map((s) => [s.t, s.heapUsed]));
    const wholeP99 = samples.at(-1)?.wholeP99 ?? Number.NaN;
    const worstWindow = Math.max(...samples.map((s) => s.p99));
    const last = samples.at(-1) as Sample;
    console.log(
      table(
        [
          'soak',
          'samples',
          'RSS mean (2nd half)',
          'RSS slope',
          'heap slope',
          'loop p99',
          'worst 10 s p99',
          'calls ended',
        ],
        [
          [
            `${MINUTES} min at concurrency 200`,
            fmtInt(samples.length),
            `${mb(meanRss).toFixed(1)} MB`,
            `${(mb(perMs) * 3_600_000).toFixed(1)} MB/h`,
            `${(mb(heapPerMs) * 3_600_000).toFixed(1)} MB/h`,
            `${wholeP99} ms`,
            `${worstWindow} ms`,
            fmtInt(last.ended ?? 0),
          ],
        ],
      ),
    );
    console.log(
      `  task ${state?.state ?? 'missing'} with ${fmtInt(live.rows[0]?.n ?? 0)} calls live at the end; load average ` +
        `${load1.toFixed(2)} on ${os.availableParallelism()} cores`,
    );
    return [
      budget(
        'soak: no RSS growth trend over the second half',
        growth < GROWTH_BUDGET,
        `${(mb(perMs) * 3_600_000).toFixed(1)} MB/h over ${(halfMs / 60_000).toFixed(1)} min: ` +
          `${(growth * 100).toFixed(1)}% of ${mb(meanRss).toFixed(0)} MB (budget < ${GROWTH_BUDGET * 100}%)`,
      ),
      budget(
        `soak: event-loop delay p99 ≤ ${P99_BUDGET_MS} ms`,
        wholeP99 <= P99_BUDGET_MS,
        `p99 ${wholeP99} ms over the run (worst 10 s window ${worstWindow} ms), load ${load1.toFixed(2)}`,
      ),
    ];
  });
}
