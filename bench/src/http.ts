import os from 'node:os';
import autocannon from 'autocannon';
import { repoRoot } from './lib/paths';
import { freePort, httpRequest, spawnNode, waitForOk, withScope } from './lib/proc';
import { type BudgetResult, budget, fmtInt, fmtPct, fmtRatio, table } from './lib/report';
import { DEMO_EMAIL, demoSettled, login, startServer } from './lib/server';

const CONNECTIONS = 10;
const WARMUP_S = 2;
const MEASURE_S = 8;
/** The authenticated, database-backed endpoint must keep at least this share of bare node:http. */
const MIN_AUTH_RATIO = 0.3;

// Same envelope shape and roughly the same size as the real API's answers, so the baseline
// differs from the real server by the framework and database work, not by the payload.
export const BARE_SERVER = `
const http = require('node:http');
const body = JSON.stringify({ success: true, status: 200, data: { status: 'ok' }, message: 'ok', msg: 'ok', error: null });
http
  .createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
`;

interface Measurement {
  label: string;
  reqPerSec: number;
  p99Ms: number;
  requests: number;
  /** Non-2xx answers, connection errors and timeouts: any of them makes the figures meaningless. */
  bad: number;
}

async function load(label: string, url: string, headers: Record<string, string> = {}): Promise<Measurement> {
  const opts = { url, connections: CONNECTIONS, pipelining: 1, headers, timeout: 10 };
  // The warm-up lets V8 optimise the hot paths and fills connection pools; its figures are dropped.
  await autocannon({ ...opts, duration: WARMUP_S });
  const r = await autocannon({ ...opts, duration: MEASURE_S });
  return {
    label,
    reqPerSec: r.requests.average,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    bad: r.non2xx + r.errors + r.timeouts,
  };
}

export async function httpBenchmark(): Promise<BudgetResult[]> {
  const cores = os.availableParallelism();
  console.log(
    `  autocannon runs in this process, each server in its own process: load generator and server\n` +
      `  share the ${cores} CPU core(s), so absolute figures are low; compare the ratios.\n` +
      `  ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${MEASURE_S} s measured per endpoint.`,
  );

  const bare = await withScope(async (scope) => {
    const port = await freePort();
    const child = spawnNode(scope, 'bare node:http server', ['-e', BARE_SERVER], {
      cwd: repoRoot,
      env: { ...process.env, PORT: String(port) },
    });
    const url = `http://127.0.0.1:${port}/`;
    await waitForOk(url, child, { timeoutMs: 10_000 });
    return load('bare node:http (baseline)', url);
  });

  const measureServer = (name: string, env?: NodeJS.ProcessEnv) =>
    withScope(async (scope) => {
      const server = await startServer(scope, { env });
      const token = await login(server.baseUrl);
      const headers = { authorization: `Bearer ${token}` };
      // Measure a settled server: the demo history is produced in the background after a first start.
      const settleMs = await demoSettled(server.baseUrl, token);
      console.log(`  ${name}: demo history settled ${(settleMs / 1000).toFixed(0)} s after login`);
      // A 401 is cheaper than the real work, so make sure the token works before measuring with it.
      const check = await httpRequest(`${server.baseUrl}/api/user/current`, { headers });
      if (check.status !== 200) {
        throw new Error(`GET /api/user/current answered ${check.status}: ${check.body.slice(0, 300)}`);
      }
      const health = await load(`GET /healthz (${name})`, `${server.baseUrl}/healthz`);
      const auth = await load(
        `GET /api/user/current (${name}, bearer)`,
        `${server.baseUrl}/api/user/current`,
        headers,
      );
      // The pages a user opens most: the call list and one call's detail, from the demo history.
      const projectId = (JSON.parse(check.body) as { data: { projects: { id: string }[] } }).data.projects[0]
        ?.id;
      const listUrl = `${server.baseUrl}/api/project/${projectId}/calls?page=1&pageSize=20`;
      const first = await httpRequest(listUrl, { headers });
      const callId = (JSON.parse(first.body) as { data?: { items?: { id: string }[] } }).data?.items?.[0]?.id;
      if (first.status !== 200 || !callId) {
        throw new Error(
          `GET the call list answered ${first.status} without a call: ${first.body.slice(0, 300)}`,
        );
      }
      const list = await load(`GET calls list, 20 a page (${name})`, listUrl, headers);
      const detail = await load(
        `GET one call's detail (${name})`,
        `${server.baseUrl}/api/project/${projectId}/calls/${encodeURIComponent(callId)}`,
        headers,
      );
      return [health, auth, list, detail] as const;
    });

  const [health, auth, list, detail] = await measureServer('PGlite');
  // The scale-out path: the same endpoints on PostgreSQL, when the caller provides one.
  const pgUrl = process.env.BENCH_DATABASE_URL;
  const onPg = pgUrl
    ? await measureServer('PostgreSQL', { DATABASE_URL: pgUrl, DEMO_EMAIL, DATABASE_POOL_SIZE: '10' })
    : [];
  if (!pgUrl)
    console.log('  (set BENCH_DATABASE_URL to a scratch PostgreSQL database to measure it as well)');

  const all = [bare, health, auth, list, detail, ...onPg];
  const rows = all.map((m) => [
    m.label,
    fmtInt(m.reqPerSec),
    // autocannon's latency histogram has whole-millisecond resolution.
    m.p99Ms < 1 ? '<1' : m.p99Ms.toFixed(0),
    fmtRatio(m.reqPerSec / bare.reqPerSec),
    fmtInt(m.requests),
    fmtInt(m.bad),
  ]);
  console.log(table(['endpoint', 'req/s', 'p99 ms', 'vs bare', 'requests', 'non-2xx/err'], rows));

  const ratio = auth.reqPerSec / bare.reqPerSec;
  // Each endpoint was driven as fast as it answers with CONNECTIONS in flight: one error under
  // that load is a bug (a pool exhausted, a limit hit), not noise.
  const failing = all.filter((m) => m.bad > 0);
  const server = [health, auth, list, detail, ...onPg];
  return [
    budget(
      'http: /api/user/current throughput >= 30% of bare',
      ratio >= MIN_AUTH_RATIO && auth.bad === 0,
      auth.bad > 0
        ? `${auth.bad} non-2xx answers or errors during the run, figures are not valid`
        : `${fmtInt(auth.reqPerSec)} req/s = ${fmtPct(ratio)} of ${fmtInt(bare.reqPerSec)} req/s`,
    ),
    budget(
      'http: call list and detail under load, 0 non-2xx or errors',
      failing.length === 0,
      failing.length > 0
        ? failing.map((m) => `${m.label}: ${m.bad} non-2xx/errors`).join('; ')
        : `${fmtInt(server.reduce((n, m) => n + m.requests, 0))} requests, list ${fmtInt(list.reqPerSec)} req/s p99 ${list.p99Ms.toFixed(0)} ms, detail ${fmtInt(detail.reqPerSec)} req/s p99 ${detail.p99Ms.toFixed(0)} ms`,
    ),
  ];
}
