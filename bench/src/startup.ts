import { repoRoot } from './lib/paths';
import { describeExit, freePort, spawnNode, tempDir, waitForOk, withScope } from './lib/proc';
import { type BudgetResult, budget, fmtMs, fmtRatio, table } from './lib/report';
import { startServer } from './lib/server';

const FIRST_START_BUDGET_MS = 15_000;
const RESTART_BUDGET_MS = 5_000;
// Node's own start-up is a few tens of ms and noisy; the median of a few runs is a steadier yardstick.
const BASELINE_RUNS = 3;

const BARE_SERVER = `require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1');`;

/** How long a plain node process takes to answer its first request, measured the same way (50 ms polls). */
async function bareStartMs(): Promise<number> {
  return withScope(async (scope) => {
    const port = await freePort();
    const started = performance.now();
    const child = spawnNode(scope, 'bare node:http server', ['-e', BARE_SERVER], {
      cwd: repoRoot,
      env: { ...process.env, PORT: String(port) },
    });
    await waitForOk(`http://127.0.0.1:${port}/`, child, { intervalMs: 50, timeoutMs: 10_000 });
    return performance.now() - started;
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

export async function startupBenchmark(): Promise<BudgetResult[]> {
  const baselines: number[] = [];
  for (let i = 0; i < BASELINE_RUNS; i++) baselines.push(await bareStartMs());
  const baseline = median(baselines);

  const { first, shutdown, restart } = await withScope(async (scope) => {
    // One DATA_DIR for both starts: the first creates the database, runs migrations and seeds the
    // demo user; the restart finds all of that in place, which is the everyday case after a deploy.
    const dataDir = tempDir(scope, 'startup');
    const first = await startServer(scope, { dataDir, name: 'server (first start)' });
    const shutdown = await first.child.stop();
    if (shutdown.killed || shutdown.code !== 0) {
      // A dirty exit can leave the lock or the database in a state that changes the restart time.
      console.log(`  warning: first server did not stop cleanly (${describeExit(shutdown)})`);
    }
    const restart = await startServer(scope, { dataDir, name: 'server (restart)' });
    await restart.child.stop();
    return { first: first.readyMs, shutdown, restart: restart.readyMs };
  });

  console.log(`  time from spawn until the first 200 (polled every 50 ms)`);
  console.log(
    table(
      ['process', 'time', 'vs baseline'],
      [
        [`bare node -e http server (baseline, median of ${BASELINE_RUNS})`, fmtMs(baseline), fmtRatio(1)],
        ['server, first start on empty DATA_DIR', fmtMs(first), fmtRatio(first / baseline)],
        ['server, restart on same DATA_DIR', fmtMs(restart), fmtRatio(restart / baseline)],
      ],
    ),
  );
  console.log(
    `  baseline runs: ${baselines.map((b) => fmtMs(b)).join(', ')}; ` +
      `SIGTERM -> exit took ${fmtMs(shutdown.stopMs)} (${describeExit(shutdown)})`,
  );

  return [
    budget(
      'startup: first start <= 15 s',
      first <= FIRST_START_BUDGET_MS,
      `${fmtMs(first)} (${fmtRatio(first / FIRST_START_BUDGET_MS)} of budget)`,
    ),
    budget(
      'startup: restart <= 5 s',
      restart <= RESTART_BUDGET_MS,
      `${fmtMs(restart)} (${fmtRatio(restart / RESTART_BUDGET_MS)} of budget)`,
    ),
  ];
}
