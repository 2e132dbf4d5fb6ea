import os from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import autocannon from 'autocannon';
import { BARE_SERVER } from './http';
import { repoRoot } from './lib/paths';
import { psql, startPostgres } from './lib/pg';
import { freePort, httpRequest, type Scope, spawnNode, waitForOk, withScope } from './lib/proc';
import { type BudgetResult, budget, fmtInt, fmtPct, fmtRatio, table } from './lib/report';
import { DEMO_EMAIL, demoSettled, login, startServer } from './lib/server';

const CONNECTIONS = 10;
const WARMUP_S = 3;
const MEASURE_S = 8;
/** Measured rounds, each endpoint in turn: a shared machine's load then falls on all of them alike. */
const ROUNDS = 2;
const POOL_SIZE = 10;
const PAGE = 20;
/** The open API's list-calls must keep at least this share of bare node:http doing the same query. */
const MIN_RATIO = 0.3;
/**
 * The console caps a key at 60,000 requests a minute; autocannon sends more than that, so the key's
 * limit is raised in the database. The limiter still counts every request, it just never refuses.
 */
const BENCH_RATE_LIMIT = 100_000_000;

/**
 * The floor for GET /opendock/v1/calls?limit=20: node:http and `pg` with a pool of the server's
 * size, running the route's first-page keyset query (modules/opendock/open-calls.service.ts
 * listCallsByCursor with no filters: every column of the project's calls, newest first, id as
 * tie-breaker, one row more than the page to know whether there is a next one), mapped to the
 * route's CallSummary shape (calls.service.ts toSummary) and its nextCursor, in the envelope.
 * What the real server adds on top is the platform: Fastify, the key lookup (cached), IP and
 * scope checks, the rate limiter, the request log, query validation and the contract serializer.
 */
const SAME_QUERY_SERVER = `
const http = require('node:http');
const pg = require('pg');
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL_SIZE) });
pool.on('error', () => {});
const projectId = process.env.PROJECT_ID;
// SELECT * = the Drizzle schema's columns, which db.select().from(calls) names one by one.
const query = 'SELECT * FROM calls WHERE project_id = $1 ORDER BY started_at DESC, id DESC LIMIT $2';
const iso = (d) => (d ? d.toISOString() : null);
const summary = (r) => ({
  id: r.id,
  direction: r.direction,
  callerNumber: r.caller_number,
  calleeNumber: r.callee_number,
  taskId: r.task_id,
  taskName: r.task_name,
  contactId: r.contact_id,
  contactName: r.contact_name,
  assistantId: r.assistant_id,
  assistantName: r.assistant_name,
  assistantVersion: r.assistant_version,
  status: r.status,
  endReason: r.end_reason,
  hangupBy: r.hangup_by,
  startedAt: r.started_at.toISOString(),
  answeredAt: iso(r.answered_at),
  endedAt: iso(r.ended_at),
  talkSeconds: r.talk_seconds,
  turnCount: r.turn_count,
  intentGrade: r.intent_grade,
  machineGrade: r.machine_grade,
  humanGrade: r.human_grade,
  tags: r.tags,
  summary: r.summary,
  recording: r.recording,
  persona: r.persona ?? null,
});
http
  .createServer(async (req, res) => {
    try {
      const limit = Number(new URL(req.url, 'http://x').searchParams.get('limit') ?? 20);
      const { rows } = await pool.query(query, [projectId, limit + 1]);
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const nextCursor =
        rows.length > limit && last
          ? Buffer.from(JSON.stringify({ t: last.started_at.getTime(), id: last.id, o: 'desc' })).toString('base64url')
          : null;
      const body = JSON.stringify({
        success: true,
        status: 200,
        data: { items: page.map(summary), nextCursor },
        message: 'ok',
        msg: 'ok',
        error: null,
      });
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    }
  })
  .listen(Number(process.env.PORT), '127.0.0.1');
`;

interface Target {
  label: string;
  url: string;
  headers?: Record<string, string>;
}

interface Round {
  reqPerSec: number;
  p99Ms: number;
  requests: number;
  /** Non-2xx answers, connection errors and timeouts: any of them makes the figures meaningless. */
  bad: number;
}

const run = async (t: Target, seconds: number): Promise<Round> => {
  const r = await autocannon({
    url: t.url,
    headers: t.headers ?? {},
    connections: CONNECTIONS,
    pipelining: 1,
    timeout: 10,
    duration: seconds,
  });
  return {
    reqPerSec: r.requests.average,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    bad: r.non2xx + r.errors + r.timeouts,
  };
};

async function spawnBare(
  scope: Scope,
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const port = await freePort();
  // cwd at the repo root: `node -e` resolves require('pg') from there (the server's own copy).
  const child = spawnNode(scope, name, ['-e', script], {
    cwd: repoRoot,
    env: { ...process.env, ...env, PORT: String(port) },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForOk(`${url}/`, child, { timeoutMs: 10_000 });
  return url;
}

async function getJson<T>(url: string, headers: Record<string, string> = {}) {
  const res = await httpRequest(url, { headers });
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${res.body.slice(0, 300)}`);
  return { res, body: JSON.parse(res.body) as { data: T } };
}

/** Against the static envelope the shares are a few percent: whole percents would hide them. */
const pct1 = (r: number) => `${(r * 100).toFixed(1)}%`;

type CallPage = { items: { id: string }[]; nextCursor: string | null };

export async function opendockBenchmark(): Promise<BudgetResult[]> {
  const cores = os.availableParallelism();
  console.log(
    `  autocannon runs in this process, each server in its own process: they share the ${cores} CPU core(s)\n` +
      `  with PostgreSQL, so absolute figures are low; compare the ratios. ${CONNECTIONS} connections,\n` +
      `  ${WARMUP_S} s warm-up per endpoint, then ${ROUNDS} rounds of ${MEASURE_S} s per endpoint in turn.`,
  );

  return withScope(async (scope) => {
    // PGlite serves one process: the baseline must read the server's database, so PostgreSQL.
    const pg = await startPostgres(scope);
    console.log(
      pg.throwaway
        ? '  PostgreSQL: throwaway cluster on loopback (fsync off), removed at the end'
        : '  PostgreSQL: BENCH_DATABASE_URL (the bench key is deleted at the end)',
    );
    const server = await startServer(scope, {
      env: { DATABASE_URL: pg.url, DATABASE_POOL_SIZE: String(POOL_SIZE), DEMO_EMAIL },
    });
    const token = await login(server.baseUrl);
    const console_ = { authorization: `Bearer ${token}` };
    // A settled server: the demo history is made in the background after a first start, and a
    // server still making it would spend a core on that during the measurement.
    const settleMs = await demoSettled(server.baseUrl, token);
    const { body: me } = await getJson<{ projects: { id: string }[] }>(
      `${server.baseUrl}/api/user/current`,
      console_,
    );
    const projectId = me.data.projects[0]?.id;
    if (!projectId) throw new Error('the demo user has no project');

    // The key as a customer gets it: created in the console by the owner, records read only.
    const created = await httpRequest(`${server.baseUrl}/api/project/${projectId}/api-keys`, {
      method: 'POST',
      headers: { ...console_, 'content-type': 'application/json' },
      body: JSON.stringify({ name: '吞吐基准', scopes: { records: 'read' } }),
    });
    if (created.status !== 200) {
      throw new Error(`creating the API key answered ${created.status}: ${created.body.slice(0, 300)}`);
    }
    const { key, secret } = (JSON.parse(created.body) as { data: { key: { id: string }; secret: string } })
      .data;
    if (!pg.throwaway) scope.defer(() => psql(pg.url, `DELETE FROM api_keys WHERE id = '${key.id}';`));
    // Raised behind the console's back, so every process's cached copy is evicted as an edit would.
    await psql(
      pg.url,
      `UPDATE api_keys SET rate_limit_per_minute = ${BENCH_RATE_LIMIT} WHERE id = '${key.id}';
       SELECT pg_notify('api_key_changed', key_hash) FROM api_keys WHERE id = '${key.id}';`,
    );
    const apiKey = { authorization: `Bearer ${secret}` };
    const { body: identity } = await getJson<{ rateLimitPerMinute: number }>(
      `${server.baseUrl}/opendock/v1/me`,
      apiKey,
    );
    if (identity.data.rateLimitPerMinute !== BENCH_RATE_LIMIT) {
      throw new Error(`the key's rate limit is ${identity.data.rateLimitPerMinute}, not ${BENCH_RATE_LIMIT}`);
    }
    console.log(
      `  demo history settled ${(settleMs / 1000).toFixed(0)} s after login; API key (records: read) created ` +
        `in the console,\n  its rate limit raised in the database to ${fmtInt(BENCH_RATE_LIMIT)}/min ` +
        '(the console allows 60,000/min, which autocannon exceeds): counted, never refused',
    );

    const sameQueryUrl = await spawnBare(scope, 'bare node:http + pg (same query)', SAME_QUERY_SERVER, {
      DATABASE_URL: pg.url,
      POOL_SIZE: String(POOL_SIZE),
      PROJECT_ID: projectId,
    });
    const staticUrl = await spawnBare(scope, 'bare node:http (static envelope)', BARE_SERVER, {});

    const listPath = `/calls?limit=${PAGE}`;
    const open: Target = {
      label: `GET /opendock/v1${listPath} (API key)`,
      url: `${server.baseUrl}/opendock/v1${listPath}`,
      headers: apiKey,
    };
    const same: Target = {
      label: 'bare node:http + pg, same query (baseline)',
      url: `${sameQueryUrl}${listPath}`,
    };
    const flat: Target = { label: 'bare node:http, static envelope (http bench)', url: `${staticUrl}/` };

    // Both must do the same work: the same page of the same calls, byte for byte in meaning.
    const [fromServer, fromBare] = await Promise.all([
      getJson<CallPage>(open.url, apiKey),
      getJson<CallPage>(same.url),
    ]);
    const a = fromServer.body.data;
    const b = fromBare.body.data;
    if (a.items.length !== PAGE || a.items.length !== b.items.length || a.items[0]?.id !== b.items[0]?.id) {
      throw new Error(
        `the baseline does not answer what the route does: ${a.items.length} items from ${a.items[0]?.id} ` +
          `against ${b.items.length} from ${b.items[0]?.id}`,
      );
    }
    if (!isDeepStrictEqual(fromServer.body, fromBare.body)) {
      const field = Object.keys(a.items[0] ?? {}).find(
        (k) => !isDeepStrictEqual((a.items[0] as never)[k], (b.items[0] as never)[k]),
      );
      throw new Error(`the baseline's answer differs from the route's (first item's ${field ?? 'envelope'})`);
    }
    const total = await psql(pg.url, `SELECT count(*) FROM calls WHERE project_id = '${projectId}'`);
    console.log(
      `  both answer the same ${a.items.length} of the project's ${total} calls (first ${a.items[0]?.id}), ` +
        `identical envelopes and nextCursor`,
    );

    const targets = [flat, same, open];
    let openRequests = 2;
    // The warm-up lets V8 optimise the hot paths and fills connection pools; its figures are dropped.
    for (const t of targets) {
      const w = await run(t, WARMUP_S);
      if (t === open) openRequests += w.requests;
    }
    const rounds = new Map<Target, Round[]>(targets.map((t) => [t, []]));
    for (let i = 0; i < ROUNDS; i++) {
      for (const t of targets) {
        const r = await run(t, MEASURE_S);
        rounds.get(t)?.push(r);
        if (t === open) openRequests += r.requests;
      }
    }
    const sum = (t: Target) => {
      const rs = rounds.get(t) ?? [];
      return {
        label: t.label,
        reqPerSec: rs.reduce((s, r) => s + r.reqPerSec, 0) / rs.length,
        p99Ms: Math.max(...rs.map((r) => r.p99Ms)),
        requests: rs.reduce((s, r) => s + r.requests, 0),
        bad: rs.reduce((s, r) => s + r.bad, 0),
        perRound: rs.map((r) => r.reqPerSec),
      };
    };
    const [flatM, sameM, openM] = targets.map(sum) as [
      ReturnType<typeof sum>,
      ReturnType<typeof sum>,
      ReturnType<typeof sum>,
    ];

    // Evidence that the platform really ran: the limiter's headers and the request log's rows.
    const last = await getJson<CallPage>(open.url, apiKey);
    openRequests += 1;
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const logged = Number(
      await psql(pg.url, `SELECT count(*) FROM api_key_requests WHERE key_id = '${key.id}'`),
    );

    const rows = [flatM, sameM, openM].map((m) => [
      m.label,
      fmtInt(m.reqPerSec),
      // autocannon's latency histogram has whole-millisecond resolution.
      m.p99Ms < 1 ? '<1' : m.p99Ms.toFixed(0),
      fmtRatio(m.reqPerSec / sameM.reqPerSec),
      m.perRound.map(fmtInt).join(' / '),
      fmtInt(m.requests),
      fmtInt(m.bad),
    ]);
    console.log(
      table(['endpoint', 'req/s', 'p99 ms', 'vs baseline', 'per round', 'requests', 'non-2xx/err'], rows),
    );
    const ratio = openM.reqPerSec / sameM.reqPerSec;
    const roundRatios = (openM.perRound ?? []).map((r, i) => fmtPct(r / (sameM.perRound[i] ?? 1)));
    console.log(
      `  per round, the open API against the same query: ${roundRatios.join(', ')}\n` +
        `  not the budget: the open API is ${pct1(openM.reqPerSec / flatM.reqPerSec)} of the static ` +
        `envelope (no database), the same query ${pct1(sameM.reqPerSec / flatM.reqPerSec)}\n` +
        `  the key's last answer: RateLimit: ${String(last.res.headers.ratelimit ?? '(missing)')}\n` +
        `  request log: ${fmtInt(logged)} rows written for the key, ${fmtInt(openRequests)} answers read by the ` +
        'load generator (requests cut off when a run stops are answered and logged too)',
    );
    for (const m of [flatM, sameM]) {
      if (m.bad > 0) console.log(`  warning: ${m.label} had ${m.bad} non-2xx answers or errors`);
    }

    const bad = openM.bad + sameM.bad;
    return [
      budget(
        'opendock: list-calls throughput >= 30% of bare node:http (same query)',
        ratio >= MIN_RATIO && bad === 0,
        bad > 0
          ? `${openM.bad} non-2xx answers or errors from the open API and ${sameM.bad} from the baseline, figures are not valid`
          : `${fmtInt(openM.reqPerSec)} req/s = ${fmtPct(ratio)} of ${fmtInt(sameM.reqPerSec)} req/s`,
      ),
    ];
  });
}
