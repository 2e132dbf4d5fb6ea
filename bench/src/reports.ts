// Issue #17 budgets (数据统计): every report over a 30-day range with 1,000,000 calls on PostgreSQL
// and 100,000 on the embedded database answers in p95 ≤ 300 ms, the home dashboard in ≤ 150 ms.
// The reports read the hourly rollups, so the rollups are built first the way a restart after an
// upgrade builds them (every project-hour marked dirty, recomputed from calls and call_turns), and
// that build is timed too. Each request is measured one at a time, interleaved with an
// authenticated request that runs no report query (GET /api/user/current), as in `calls`.
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { openDatabase } from '../../apps/server/src/db/client';
import { processDirty } from '../../apps/server/src/modules/reports/rollup-worker';
import {
  CALL_ROWS,
  currentProjectId,
  DAYS,
  fmtMs2,
  query,
  seedSql,
  summarise,
  timedGet,
  vacuumWhenAlone,
} from './calls';
import { psql, startPostgres } from './lib/pg';
import { httpRequest, type Scope, tempDir, withScope } from './lib/proc';
import { type BudgetResult, budget, fmtInt, fmtMs, fmtRatio, table } from './lib/report';
import { DEMO_EMAIL, login, type RunningServer, startServer } from './lib/server';

const PGLITE_CALL_ROWS = 100_000;
const REPORT_P95_BUDGET_MS = 300;
const DASHBOARD_P95_BUDGET_MS = 150;
const WARMUP_ROUNDS = 3;
const ROUNDS = 40;
/** The 366-day range is printed for information only (no budget): fewer rounds. */
const YEAR_ROUNDS = 10;
const DAY_MS = 86_400_000;
const CHINA_OFFSET_MS = 8 * 3_600_000;

/** Today's China date, and the day `back` days before it (YYYY-MM-DD). */
const chinaDate = (back = 0) =>
  new Date(Date.now() + CHINA_OFFSET_MS - back * DAY_MS).toISOString().slice(0, 10);

// ---------------------------------------------------------------------------------------------
// What the demo project brings: its knowledge base (a real FAQ, indexed by the server), the
// broadband assistant linked to it, two more assistants from templates.

interface DemoProject {
  projectId: string;
  token: string;
  assistants: { id: string; name: string; version: number }[];
  /** The published assistant whose configuration names the knowledge base. */
  knowledgeAssistantId: string;
  knowledgeBaseId: string;
}

async function getJson<T>(url: string, token: string): Promise<T> {
  const { body } = await timedGet(url, { authorization: `Bearer ${token}` });
  return (JSON.parse(body) as { data: T }).data;
}

/**
 * On the setup server (demo on): publishes the two template assistants the demo leaves as drafts
 * (calls only ever run a published version) and waits for the FAQ's segments, which the turns
 * seeded below cite as what retrieval found.
 */
async function demoProject(server: RunningServer): Promise<DemoProject> {
  const token = await login(server.baseUrl);
  const projectId = await currentProjectId(server.baseUrl, token);
  const api = `${server.baseUrl}/api/project/${projectId}`;
  type Assistant = { id: string; name: string; publishedVersion: number | null; knowledgeBaseCount: number };
  const listed = await getJson<{ items: Assistant[] }>(`${api}/assistants?pageSize=100`, token);
  for (const a of listed.items.filter((a) => a.publishedVersion === null)) {
    const res = await httpRequest(`${api}/assistants/${a.id}/publish`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ note: 'bench' }),
    });
    if (res.status !== 200) throw new Error(`publishing ${a.name} answered ${res.status}: ${res.body}`);
  }
  const published = (await getJson<{ items: Assistant[] }>(`${api}/assistants?pageSize=100`, token)).items;
  const withKnowledge = published.find((a) => a.knowledgeBaseCount > 0);
  if (!withKnowledge) throw new Error('the demo project has no assistant with a knowledge base');

  type Base = { id: string; segmentCount: number; pendingCount: number };
  const deadline = performance.now() + 120_000;
  for (;;) {
    const bases = (await getJson<{ items: Base[] }>(`${api}/knowledge-bases`, token)).items;
    const ready = bases.find((b) => b.segmentCount > 0 && b.pendingCount === 0);
    if (ready)
      return {
        projectId,
        token,
        assistants: published.map((a) => ({ id: a.id, name: a.name, version: a.publishedVersion ?? 1 })),
        knowledgeAssistantId: withKnowledge.id,
        knowledgeBaseId: ready.id,
      };
    if (performance.now() > deadline) throw new Error('the demo knowledge base was not indexed within 120 s');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

// ---------------------------------------------------------------------------------------------
// Seeding

/** FAQ questions the knowledge base answers (a segment at or above the 0.3 threshold is cited). */
const ANSWERED = [
  '你们有哪些宽带套餐',
  '千兆套餐多少钱一个月',
  '有没有优惠活动',
  '可以办短期宽带吗',
  '合约期有多长',
  '安装要多久',
  '搬家了怎么移机',
  '网络坏了怎么报修',
  '账单在哪里查',
  '怎么销户',
];
/** Questions it cannot answer: eight topics, two wordings each, for the knowledge-gap list. */
const UNANSWERED = [
  '你们有企业专线吗',
  '企业专线怎么办理',
  '能不能装在商铺里',
  '商铺可以装宽带吗',
  '可以开发票吗',
  '发票怎么开',
  '有没有固定IP',
  '固定IP多少钱',
  '支持IPv6吗',
  'IPv6什么时候开通',
  '能不能用自己的路由器',
  '自己买的路由器能用吗',
  '外地的房子能办吗',
  '外地能不能办理',
  '老人手机怎么设置WiFi',
  '老人手机WiFi怎么连',
];

/**
 * The conversation of every answered call of the knowledge assistant: greeting, two caller
 * questions and two replies through the brain (latency recorded, segments cited). One call in
 * eight asks a second question the FAQ cannot answer (no segment, or one under the threshold).
 * Other assistants' calls get no turns: their rows, trends and funnels come from `calls` alone.
 */
const turnsSql = (projectId: string, demo: DemoProject) => `
INSERT INTO call_turns (call_id, index, speaker, text, start_ms, end_ms, latency, segments)
WITH segs AS (
  SELECT array_agg(s.id ORDER BY s.position, s.id) AS ids,
         array_agg(s.content ORDER BY s.position, s.id) AS contents,
         max(d.file_name) AS document, count(*)::int AS n
  FROM knowledge_segments s JOIN knowledge_documents d ON d.id = s.document_id
  WHERE s.knowledge_base_id = '${demo.knowledgeBaseId}'
),
c AS (
  SELECT id, abs(hashtext(id)) AS k FROM calls
  WHERE project_id = '${projectId}' AND assistant_id = '${demo.knowledgeAssistantId}' AND answered_at IS NOT NULL
),
q AS (
  SELECT c.id, c.k,
    (ARRAY[${ANSWERED.map((s) => `'${s}'`).join(',')}])[1 + c.k % ${ANSWERED.length}] AS q1,
    c.k % 8 = 0 AS gap,
    CASE WHEN c.k % 8 = 0
      THEN (ARRAY[${UNANSWERED.map((s) => `'${s}'`).join(',')}])[1 + (c.k / 8) % ${UNANSWERED.length}]
      ELSE (ARRAY[${ANSWERED.map((s) => `'${s}'`).join(',')}])[1 + (c.k / 7) % ${ANSWERED.length}] END AS q2,
    jsonb_build_object('recognitionMs', 120 + c.k % 200, 'retrievalMs', 4 + c.k % 30,
      'brainMs', 300 + (c.k / 3) % 900, 'firstTokenMs', 200 + (c.k / 5) % 300,
      'synthesisMs', 150 + (c.k / 11) % 250) AS latency,
    jsonb_build_array(jsonb_build_object('id', segs.ids[1 + c.k % segs.n], 'knowledgeBaseId',
      '${demo.knowledgeBaseId}', 'documentName', segs.document,
      'content', left(segs.contents[1 + c.k % segs.n], 80), 'score', 0.45 + (c.k % 50) / 100.0)) AS hit1,
    jsonb_build_array(jsonb_build_object('id', segs.ids[1 + (c.k / 7) % segs.n], 'knowledgeBaseId',
      '${demo.knowledgeBaseId}', 'documentName', segs.document,
      'content', left(segs.contents[1 + (c.k / 7) % segs.n], 80), 'score', 0.45 + (c.k % 37) / 100.0)) AS hit2,
    CASE WHEN c.k % 16 = 0 THEN '[]'::jsonb
      ELSE jsonb_build_array(jsonb_build_object('id', segs.ids[1 + (c.k / 3) % segs.n], 'knowledgeBaseId',
        '${demo.knowledgeBaseId}', 'documentName', segs.document,
        'content', left(segs.contents[1 + (c.k / 3) % segs.n], 80), 'score', 0.1 + (c.k % 15) / 100.0)) END AS miss
  FROM c CROSS JOIN segs
)
SELECT q.id, v.i, v.speaker, v.text, v.start_ms, v.start_ms + 2500, v.latency, v.segments
FROM q CROSS JOIN LATERAL (VALUES
  (0, 'assistant', '您好，这里是星河宽带，打扰您一分钟做个回访。', 0, NULL::jsonb, '[]'::jsonb),
  (1, 'callee', q.q1, 4000, NULL::jsonb, '[]'::jsonb),
  (2, 'assistant', '好的，我为您介绍一下。', 7000, q.latency, q.hit1),
  (3, 'callee', q.q2, 12000, NULL::jsonb, '[]'::jsonb),
  (4, 'assistant', '这个问题我记录下来，稍后请专员联系您。', 15000, q.latency,
    CASE WHEN q.gap THEN q.miss ELSE q.hit2 END)
) AS v(i, speaker, text, start_ms, latency, segments)
`;

/**
 * After the calls and turns: no running task left to dial, the rollups emptied and every
 * project-hour marked dirty as the repository would have (a minute ago, past the worker's
 * debounce). Answers the number of dirty hours.
 */
const markAllSql = (projectId: string) => `
UPDATE call_tasks SET state = 'paused' WHERE project_id = '${projectId}' AND state IN ('pending', 'running');
DELETE FROM call_stats_hourly WHERE project_id = '${projectId}';
DELETE FROM call_stats_histogram WHERE project_id = '${projectId}';
DELETE FROM knowledge_stats_hourly WHERE project_id = '${projectId}';
DELETE FROM knowledge_gaps WHERE project_id = '${projectId}';
DELETE FROM knowledge_segment_hits_hourly WHERE project_id = '${projectId}';
DELETE FROM call_stats_dirty WHERE project_id = '${projectId}';
WITH marked AS (
  INSERT INTO call_stats_dirty (project_id, hour, marked_at)
  SELECT DISTINCT project_id, date_trunc('hour', started_at at time zone 'UTC') at time zone 'UTC',
    now() - interval '1 minute'
  FROM calls WHERE project_id = '${projectId}'
  RETURNING 1
)
SELECT count(*) FROM marked;
`;

/** Runs SQL and answers the first column of the last row of the last statement, as text. */
type RunSql = (sql: string) => Promise<string>;

/**
 * The calls (the `calls` benchmark's generator, spread over the demo's assistants), their turns,
 * the dirty marks; each step timed.
 */
async function seed(run: RunSql, demo: DemoProject, rows: number) {
  // An index (or any statement) proposed for a migration, tried on both databases before it is one.
  const extra = process.env.REPORTS_BENCH_SQL;
  if (extra) {
    console.log(`  REPORTS_BENCH_SQL: ${extra}`);
    await run(extra);
  }
  const started = performance.now();
  const calls = Number(await run(seedSql(demo.projectId, { rows, days: DAYS, assistants: demo.assistants })));
  if (calls !== rows) throw new Error(`expected ${rows} calls in the project, found ${calls}`);
  const callsMs = performance.now() - started;
  const turns = Number(
    await run(
      `WITH inserted AS (${turnsSql(demo.projectId, demo).trim()} RETURNING 1) SELECT count(*) FROM inserted;`,
    ),
  );
  const turnsMs = performance.now() - started - callsMs;
  const hours = Number(await run(markAllSql(demo.projectId)));
  if (!(turns > 0) || !(hours > 0)) throw new Error(`seeding left ${turns} turns and ${hours} dirty hours`);
  const timing = `calls ${fmtMs(callsMs)}, turns ${fmtMs(turnsMs)}, marks ${fmtMs(performance.now() - started - callsMs - turnsMs)}`;
  return { calls, turns, hours, timing };
}

const ROLLUP_TABLES = [
  'call_stats_hourly',
  'call_stats_histogram',
  'knowledge_stats_hourly',
  'knowledge_gaps',
  'knowledge_segment_hits_hourly',
];

// ---------------------------------------------------------------------------------------------
// Measuring

interface Endpoint {
  label: string;
  url: string;
  budgetMs: number | null;
  /** What makes the answer meaningful: non-zero calls (or questions, gaps); an error message if not. */
  check: (data: never) => string | null;
}

type Figure = { value: number };
const checks = {
  callin: (d: { figures: { offered: Figure } }) =>
    d.figures.offered.value > 0 ? null : 'no inbound calls offered',
  assistant: (d: { rows: { calls: number }[]; latency: { samples: number }[] }) =>
    d.rows.some((r) => r.calls > 0) && d.latency.some((l) => l.samples > 0)
      ? null
      : 'no assistant row with calls, or no latency samples',
  numbers: (d: { rows: { calls: number }[] }) =>
    d.rows.some((r) => r.calls > 0) ? null : 'no caller number with calls',
  knowledge: (d: { figures: { questions: Figure }; topSegments: unknown[] }) =>
    d.figures.questions.value > 0 && d.topSegments.length > 0 ? null : 'no questions or no segments used',
  gaps: (d: { total: number }) => (d.total > 0 ? null : 'no knowledge-gap topic'),
  dashboard: (d: { last7Days: { calls: number } }) =>
    d.last7Days.calls > 0 ? null : 'no calls in the last 7 days',
};

function endpoints(
  api: string,
  from: string,
  to: string,
  budgetMs: number | null,
  suffix: string,
): Endpoint[] {
  const range = query({ from, to });
  const e = (label: string, p: string, check: Endpoint['check']): Endpoint => ({
    label: `${label} ${suffix}`,
    url: `${api}/reports/${p}?${range}`,
    budgetMs,
    check,
  });
  return [
    e('/reports/callin', 'callin', checks.callin as Endpoint['check']),
    e('/reports/assistant', 'assistant', checks.assistant as Endpoint['check']),
    e('/reports/numbers', 'numbers', checks.numbers as Endpoint['check']),
    e('/reports/knowledge', 'knowledge', checks.knowledge as Endpoint['check']),
    e('/reports/knowledge/gaps', 'knowledge/gaps', checks.gaps as Endpoint['check']),
  ];
}

interface Measured {
  endpoint: Endpoint;
  ms: number[];
  baselineMs: number[];
}

/**
 * Round-robin over the endpoints, each request right after a baseline request, one at a time:
 * every endpoint sees the same machine, caches and connection cost as its baseline.
 */
async function measure(server: RunningServer, token: string, list: Endpoint[], rounds: number) {
  const headers = { authorization: `Bearer ${token}` };
  const baselineUrl = `${server.baseUrl}/api/user/current`;
  const measured: Measured[] = list.map((endpoint) => ({ endpoint, ms: [], baselineMs: [] }));
  for (let round = 0; round < WARMUP_ROUNDS + rounds; round++) {
    for (const m of measured) {
      const b = await timedGet(baselineUrl, headers);
      const r = await timedGet(m.endpoint.url, headers);
      if (round === 0) {
        const problem = m.endpoint.check((JSON.parse(r.body) as { data: never }).data);
        if (problem) throw new Error(`${m.endpoint.url}: ${problem}: ${r.body.slice(0, 400)}`);
      }
      if (round < WARMUP_ROUNDS) continue;
      m.ms.push(r.ms);
      m.baselineMs.push(b.ms);
    }
  }
  return measured;
}

function report(database: string, measured: Measured[]): BudgetResult[] {
  console.log(
    table(
      ['endpoint', 'n', 'p50', 'p95', 'max', 'baseline p95', 'ratio p95', 'budget'],
      measured.map(({ endpoint, ms, baselineMs }) => {
        const s = summarise(ms);
        const b = summarise(baselineMs);
        return [
          endpoint.label,
          fmtInt(s.n),
          fmtMs2(s.p50),
          fmtMs2(s.p95),
          fmtMs2(s.max),
          fmtMs2(b.p95),
          fmtRatio(s.p95 / Math.max(b.p95, 0.001)),
          endpoint.budgetMs === null ? '(info)' : `≤ ${endpoint.budgetMs} ms`,
        ];
      }),
    ),
  );
  return measured
    .filter((m) => m.endpoint.budgetMs !== null)
    .map(({ endpoint, ms, baselineMs }) => {
      const s = summarise(ms);
      const b = summarise(baselineMs);
      const limit = endpoint.budgetMs as number;
      return budget(
        `reports (${database}): ${endpoint.label} p95 <= ${limit} ms`,
        s.p95 <= limit,
        `${fmtMs2(s.p95)} over ${fmtInt(s.n)} requests (${fmtRatio(s.p95 / Math.max(b.p95, 0.001))} of /api/user/current at p95)`,
      );
    });
}

async function measureAll(database: string, server: RunningServer, demo: DemoProject) {
  const token = await login(server.baseUrl);
  const api = `${server.baseUrl}/api/project/${demo.projectId}`;
  const today = chinaDate();
  const month: Endpoint[] = [
    ...endpoints(api, chinaDate(29), today, REPORT_P95_BUDGET_MS, '(30 days, hourly)'),
    {
      label: '/dashboard (today, 7 days)',
      url: `${api}/dashboard`,
      budgetMs: DASHBOARD_P95_BUDGET_MS,
      check: checks.dashboard as Endpoint['check'],
    },
  ];
  const year = endpoints(api, chinaDate(365), today, null, '(366 days, daily)');
  console.log(
    `  ${database}: ${month.length} endpoints over ${chinaDate(29)}..${today} (China days, the defaults: ` +
      `hourly up to 31 days) and ${year.length} over 366 days; ${WARMUP_ROUNDS} warm-up rounds, then ` +
      `${ROUNDS} (366 days: ${YEAR_ROUNDS}) rounds, one request at a time, each after a baseline request`,
  );
  const measured = [
    ...(await measure(server, token, month, ROUNDS)),
    ...(await measure(server, token, year, YEAR_ROUNDS)),
  ];
  return report(database, measured);
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: 1,000,000 calls, rollups built by the server's own worker on start

async function onPostgres(): Promise<BudgetResult[]> {
  return withScope(async (scope) => {
    const pg = await startPostgres(scope);
    console.log(
      pg.throwaway
        ? '  PostgreSQL: throwaway cluster on loopback (fsync off), removed at the end'
        : "  PostgreSQL: BENCH_DATABASE_URL (the demo project's calls are replaced, then deleted at the end)",
    );
    const db = { DATABASE_URL: pg.url, DATABASE_POOL_SIZE: '10' };
    const setup = await startServer(scope, { name: 'server (setup)', env: { ...db, DEMO_EMAIL } });
    const demo = await demoProject(setup);
    await setup.child.stop();

    const seedStarted = performance.now();
    const seeded = await seed(
      async (sql) => (await psql(pg.url, sql)).split('\n').at(-1) ?? '',
      demo,
      CALL_ROWS,
    );
    await vacuumWhenAlone(pg.url, 'calls, call_turns');
    const seedMs = performance.now() - seedStarted;
    if (!pg.throwaway)
      scope.defer(() => psql(pg.url, `DELETE FROM calls WHERE project_id = '${demo.projectId}';`));
    console.log(
      `  ${fmtInt(seeded.calls)} calls over ${DAYS} days (${demo.assistants.length} assistants), ` +
        `${fmtInt(seeded.turns)} turns, ${fmtInt(seeded.hours)} project-hours marked dirty; ` +
        `inserted + VACUUM ANALYZE in ${fmtMs(seedMs)} (${seeded.timing})`,
    );

    // What a restart after an upgrade costs: the worker claims the dirty hours as the server starts.
    const started = performance.now();
    const server = await startServer(scope, { env: { ...db, DEMO: 'off' } });
    let left = seeded.hours;
    for (;;) {
      left = Number(
        await psql(pg.url, `SELECT count(*) FROM call_stats_dirty WHERE project_id = '${demo.projectId}'`),
      );
      if (left === 0) break;
      if (performance.now() - started > 30 * 60_000)
        throw new Error(`rollups not built after 30 minutes: ${left} project-hours left`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const rollupMs = performance.now() - started;
    const rollupSize = await psql(
      pg.url,
      `SELECT string_agg(relname || ' ' || n_live_tup, ', ' ORDER BY relname) FROM pg_stat_user_tables ` +
        `WHERE relname IN (${ROLLUP_TABLES.map((t) => `'${t}'`).join(',')})`,
    );
    console.log(
      `  rollups of ${fmtInt(seeded.hours)} project-hours built by the server's worker in ${fmtMs(rollupMs)} ` +
        `(${fmtMs(rollupMs / seeded.hours)} per hour; server ready after ${fmtMs(server.readyMs)}); rows: ${rollupSize}`,
    );
    // The statistics autovacuum would gather within its next minute after a write this size.
    await psql(pg.url, `ANALYZE ${ROLLUP_TABLES.join(', ')};`);
    return measureAll(`PostgreSQL, ${fmtInt(CALL_ROWS)} calls`, server, demo);
  });
}

// ---------------------------------------------------------------------------------------------
// PGlite: 100,000 calls in the server's own DATA_DIR, seeded and rolled up while it is stopped

async function onPglite(): Promise<BudgetResult[]> {
  return withScope(async (scope: Scope) => {
    const dataDir = tempDir(scope, 'data');
    const setup = await startServer(scope, { dataDir, name: 'server (setup)', env: { DEMO_EMAIL } });
    const demo = await demoProject(setup);
    await setup.child.stop();

    // PGlite serves one process: with the server stopped, this process opens the same directory.
    const client = await PGlite.create(path.join(dataDir, 'pglite'));
    const handle = await openDatabase({ kind: 'pglite', client });
    try {
      const seedStarted = performance.now();
      const seeded = await seed(
        async (sql) => {
          const last = (await client.exec(sql)).at(-1)?.rows[0] as Record<string, unknown> | undefined;
          return String(Object.values(last ?? {})[0] ?? '');
        },
        demo,
        PGLITE_CALL_ROWS,
      );
      await client.exec('VACUUM ANALYZE calls, call_turns;');
      console.log(
        `  PGlite: ${fmtInt(seeded.calls)} calls over ${DAYS} days, ${fmtInt(seeded.turns)} turns, ` +
          `${fmtInt(seeded.hours)} project-hours marked dirty; inserted + VACUUM ANALYZE in ` +
          `${fmtMs(performance.now() - seedStarted)} (${seeded.timing})`,
      );
      // The worker's own recompute (processDirty), here rather than in the server: nothing outside
      // the server could watch the dirty marks drain while it holds the directory.
      const started = performance.now();
      const done = await processDirty(handle.db);
      const rollupMs = performance.now() - started;
      if (done !== seeded.hours)
        throw new Error(`recomputed ${done} project-hours, ${seeded.hours} were marked`);
      await client.exec(`ANALYZE ${ROLLUP_TABLES.join(', ')};`);
      console.log(
        `  rollups of ${fmtInt(done)} project-hours built by processDirty on PGlite in ${fmtMs(rollupMs)} ` +
          `(${fmtMs(rollupMs / done)} per hour)`,
      );
    } finally {
      await handle.close();
    }

    const server = await startServer(scope, { dataDir, env: { DEMO: 'off' } });
    return measureAll(`PGlite, ${fmtInt(PGLITE_CALL_ROWS)} calls`, server, demo);
  });
}

export async function reportsBenchmark(): Promise<BudgetResult[]> {
  return [...(await onPostgres()), ...(await onPglite())];
}
