import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { CallEvent, CallList } from '@callpilot/contracts';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { chinaDate, importAndStart, openProjectApi, phoneRange } from '../support/project-api';
import { freePort, type RunningServer, repoRoot, startServer, stopServer, tempDir } from '../support/server';

/**
 * The README's production layout, run for real: two `ROLE=api` processes behind Debian's nginx
 * with deploy/nginx/callpilot.conf, two `ROLE=worker` processes, one PostgreSQL, one shared
 * DATA_DIR. Everything a user does goes through nginx; then one worker is killed with `kill -9`
 * in the middle of a task and nothing may be lost or done twice.
 */
const nginxBin = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => fs.existsSync(p));
const databaseUrl = process.env.TEST_DATABASE_URL;
const skipReason = !nginxBin
  ? 'nginx is not installed (apt-get install -y nginx; .ci/run installs it)'
  : !databaseUrl
    ? 'TEST_DATABASE_URL is not set (.ci/run starts a PostgreSQL and sets it)'
    : '';
if (skipReason) console.warn(`deployment test skipped: ${skipReason}`);

const DEMO_EMAIL = 'ops@example.com';
const DEMO_PASSWORD = 'deploy-pass-1';
const CONTACTS = 30;

const running: RunningServer[] = [];
const dirs: string[] = [];
let nginx: ChildProcess | undefined;
let receiver: http.Server | undefined;
let admin: pg.Client | undefined;
let database: string | undefined;
afterAll(async () => {
  for (const s of running) await stopServer(s, 'SIGKILL');
  // SIGTERM, not SIGKILL: a killed master leaves its worker processes running.
  if (nginx && nginx.exitCode === null && nginx.signalCode === null) {
    const gone = new Promise((resolve) => nginx!.once('exit', resolve));
    nginx.kill('SIGTERM');
    await Promise.race([gone, sleep(5000)]);
  }
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  if (admin && database) await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin?.end();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, what: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${JSON.stringify(value)}`);
    await sleep(200);
  }
}

/**
 * The shipped config with this run's addresses: the api processes in the upstream and a loopback
 * port to listen on. Everything else (SSE, upload size, headers) is tested as shipped.
 */
function nginxConfig(dir: string, port: number, apis: RunningServer[]): string {
  const shipped = fs.readFileSync(path.join(repoRoot, 'deploy/nginx/callpilot.conf'), 'utf8');
  const site = shipped
    .replace(/(upstream callpilot_api \{[\s\S]*?)(\s+server [^\n]+\n)+/, (_, head: string) =>
      [head, ...apis.map((a) => `\n    server 127.0.0.1:${a.port} max_fails=2 fail_timeout=5s;`), '\n'].join(
        '',
      ),
    )
    .replace(/listen 80;/, `listen 127.0.0.1:${port};`);
  expect(site).toContain(`server 127.0.0.1:${apis[1]!.port}`);
  expect(site).toContain(`listen 127.0.0.1:${port};`);
  // A private nginx: every file it writes stays in `dir`, so it runs as any user beside a system one.
  return `daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  # Lets the test see which api process answered: both must take part.
  add_header X-Upstream $upstream_addr always;
${site}
}
`;
}

/** Reads an SSE stream through nginx and keeps every event it carries. */
function followEvents(url: string, headers: Record<string, string>) {
  const events: CallEvent[] = [];
  const abort = new AbortController();
  const done = (async () => {
    const res = await fetch(url, { headers, signal: abort.signal });
    if (!res.ok || !res.body) throw new Error(`events stream: ${res.status}`);
    const decoder = new TextDecoder();
    let buffer = '';
    const reader = res.body.getReader();
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      let cut = buffer.indexOf('\n\n');
      while (cut >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        for (const line of block.split('\n')) {
          if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)) as CallEvent);
        }
        cut = buffer.indexOf('\n\n');
      }
    }
  })().catch((err) => {
    if (!abort.signal.aborted) throw err;
  });
  return { events, stop: () => abort.abort(), done };
}

const eventCallId = (e: CallEvent) => ('call' in e ? e.call.id : (e as { callId: string }).callId);

describe.skipIf(Boolean(skipReason))(
  'a production deployment: nginx, two api and two worker processes, PostgreSQL',
  () => {
    it('runs a test call, a task, an export and webhooks through nginx, and loses nothing when a worker is killed', async () => {
      admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      database = `callpilot_deploy_${Date.now()}`;
      await admin.query(`CREATE DATABASE ${database}`);
      const dbUrl = new URL(databaseUrl!);
      dbUrl.pathname = `/${database}`;
      const dataDir = tempDir('deploy-data');
      const nginxDir = tempDir('deploy-nginx');
      dirs.push(dataDir, nginxDir);

      // The webhook receiver a customer runs: it keeps every request, as a receiver that dedupes by
      // webhook-id would see them.
      const received: { id: string; type: string; data: { id?: string; state?: string } }[] = [];
      receiver = http.createServer((req, res) => {
        let body = '';
        req.on('data', (d) => {
          body += d;
        });
        req.on('end', () => {
          const payload = JSON.parse(body) as { type: string; data: { id?: string; state?: string } };
          received.push({ id: String(req.headers['webhook-id']), type: payload.type, data: payload.data });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
      const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

      // One environment for every process, as the README's guide sets it; all four start at once
      // on the empty database, so the migrations run under the advisory lock exactly once.
      const shared = {
        DATABASE_URL: dbUrl.toString(),
        DATA_DIR: dataDir,
        APP_SECRET: 'deployment-test-secret-0123456789abcdef',
        DEMO: 'off',
        SIM_TIME_SCALE: '50',
        WEBHOOK_ALLOW_PRIVATE: 'true',
      };
      // Four node processes starting at once on two shared cores may take a while to be healthy.
      // Each is kept for the clean-up as soon as it is up, so none outlives a failed start of another.
      const start = (env: Record<string, string>) =>
        startServer({ ...shared, ...env }, { timeoutMs: 180_000 }).then((s) => {
          running.push(s);
          return s;
        });
      const processes = await Promise.all([
        start({ ROLE: 'api', TRUST_PROXY: 'true' }),
        start({ ROLE: 'api', TRUST_PROXY: 'true' }),
        start({ ROLE: 'worker' }),
        start({ ROLE: 'worker' }),
      ]);
      const [api1, api2, worker1, worker2] = processes as [
        RunningServer,
        RunningServer,
        RunningServer,
        RunningServer,
      ];
      // Four processes migrated one empty database at once: each migration is applied exactly once.
      const journal = JSON.parse(
        fs.readFileSync(path.join(repoRoot, 'apps/server/drizzle/meta/_journal.json'), 'utf8'),
      ) as { entries: unknown[] };
      const migrated = new pg.Client({ connectionString: dbUrl.toString() });
      await migrated.connect();
      const applied = await migrated.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations',
      );
      await migrated.end();
      expect(applied.rows[0]!.n).toBe(journal.entries.length);

      // The operator's first user, through the admin CLI on the same DATABASE_URL.
      const seeded = spawnSync(process.execPath, [path.join(repoRoot, 'apps/server/dist/admin.js'), 'demo'], {
        env: { ...process.env, ...shared, DEMO_EMAIL, DEMO_PASSWORD, LOG_LEVEL: 'warn' },
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(seeded.status, seeded.stderr).toBe(0);
      expect(seeded.stdout).toContain(`demo created: ${DEMO_EMAIL}`);

      const nginxPort = await freePort();
      for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) fs.mkdirSync(path.join(nginxDir, sub));
      const conf = path.join(nginxDir, 'nginx.conf');
      fs.writeFileSync(conf, nginxConfig(nginxDir, nginxPort, [api1, api2]));
      const checked = spawnSync(nginxBin!, ['-t', '-q', '-p', nginxDir, '-c', conf], { encoding: 'utf8' });
      expect(checked.status, checked.stderr).toBe(0);
      let nginxLog = '';
      nginx = spawn(nginxBin!, ['-p', nginxDir, '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
      nginx.stderr?.on('data', (d) => {
        nginxLog += d;
      });
      const site = `http://127.0.0.1:${nginxPort}`;
      await until(
        () =>
          fetch(`${site}/healthz`).then(
            (r) => r.status,
            () => 0,
          ),
        (status) => status === 200,
        `nginx on ${site} (${nginxLog})`,
        15_000,
      );

      // The console itself comes through nginx, from both api processes.
      const upstreams = new Set<string>();
      for (let i = 0; i < 6; i++) {
        const page = await fetch(`${site}/login`);
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('<div id="root">');
        upstreams.add(page.headers.get('x-upstream') ?? '');
      }
      expect(upstreams).toEqual(new Set([`127.0.0.1:${api1.port}`, `127.0.0.1:${api2.port}`]));

      const api = await openProjectApi(site, DEMO_EMAIL, DEMO_PASSWORD);
      const assistants = await api.get<{ items: { id: string; publishedVersion: number | null }[] }>(
        '/assistants?pageSize=50',
      );
      const assistant = assistants.items.find((a) => a.publishedVersion)!;
      expect(assistant).toBeDefined();

      await api.call('POST', '/webhooks', {
        url: receiverUrl,
        description: '部署测试',
        events: ['call.ended', 'task.finished'],
      });

      // 模拟通话 through nginx: the api process hands it to a worker, its live events come back to the
      // browser's stream through the other layer of the stack, unbuffered.
      const stream = followEvents(`${site}/api/project/${api.projectId}/calls/events`, api.headers);
      await sleep(300);
      const { callId: testCallId } = await api.call<{ callId: string }>('POST', '/calls/test', {
        assistantId: assistant.id,
        version: assistant.publishedVersion,
        persona: 'interested',
      });
      const testCallEvents = await until(
        async () => stream.events.filter((e) => eventCallId(e) === testCallId).map((e) => e.type),
        (types) => types.includes('ended'),
        'the test call to end on the event stream',
        30_000,
      );
      expect(testCallEvents[0]).toBe('started');
      expect(testCallEvents).toContain('turn');

      // A task dialled by both workers.
      const now = Date.now();
      const task = await api.call<{ id: string }>('POST', '/tasks', {
        name: '部署验证',
        assistantId: assistant.id,
        startDate: chinaDate(now - 24 * 3600_000),
        endDate: chinaDate(now + 30 * 24 * 3600_000),
        windows: [{ days: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '24:00' }],
        skipHolidays: false,
        concurrency: 8,
        dailyCapPerNumber: 0,
        retryRules: {
          interrupted: { maxRetries: 1, intervalMinutes: 1 },
          no_answer: { maxRetries: 0, intervalMinutes: 1 },
          busy: { maxRetries: 0, intervalMinutes: 1 },
        },
      });
      await importAndStart(api, task.id, phoneRange('1380000', CONTACTS));

      // Kill a worker while both are carrying calls of the task, so the killed one certainly had some.
      const db = new pg.Client({ connectionString: dbUrl.toString() });
      await db.connect();
      try {
        const liveOwners = async () =>
          (
            await db.query<{ owner: string }>(
              `SELECT DISTINCT lease_owner AS owner FROM calls WHERE task_id = $1 AND status <> 'ended' AND lease_owner IS NOT NULL`,
              [task.id],
            )
          ).rows.map((r) => r.owner);
        await until(
          liveOwners,
          (owners) => owners.length >= 2,
          'both workers to carry calls of the task',
          30_000,
        );
        await stopServer(worker1, 'SIGKILL');

        // The survivor takes over the killed worker's contacts once their leases run out.
        await until(
          () => api.get<{ state: string; counts: unknown }>(`/tasks/${task.id}`),
          (detail) => detail.state === 'completed',
          'the task to complete after kill -9 of a worker',
          120_000,
        );
      } finally {
        await db.end();
      }
      expect(worker2.child.exitCode).toBeNull();

      const contacts = (
        await api.get<{ items: { id: string; status: string; attempts: number; skipReason?: string }[] }>(
          `/tasks/${task.id}/contacts?pageSize=100`,
        )
      ).items;
      const calls = (await api.get<CallList>(`/calls?taskId=${task.id}&pageSize=100`)).items as Array<{
        id: string;
        contactId: string;
        endReason: string;
        status: string;
      }>;
      expect(contacts).toHaveLength(CONTACTS);
      for (const contact of contacts) {
        expect(['done', 'failed', 'skipped']).toContain(contact.status);
        expect(contact.attempts).toBeGreaterThanOrEqual(1);
        expect(contact.attempts).toBeLessThanOrEqual(2);
        // Every attempt has its one record, numbered in order: none missing, none twice.
        const own = calls.filter((c) => c.contactId === contact.id).map((c) => c.id);
        expect(own.sort()).toEqual(
          Array.from({ length: contact.attempts }, (_, i) => `${contact.id}.${i + 1}`),
        );
      }
      for (const c of calls) expect(c.status).toBe('ended');
      // The killed worker's calls were closed as 系统中断 and called again (unless the callee had opted out).
      const interrupted = calls.filter((c) => c.endReason === 'interrupted');
      expect(interrupted.length).toBeGreaterThanOrEqual(1);
      for (const c of interrupted.filter((c) => c.id.endsWith('.1'))) {
        const contact = contacts.find((x) => x.id === c.contactId)!;
        if (contact.status === 'skipped') expect(contact.skipReason).toBe('免打扰号码');
        else expect(calls.some((other) => other.id === `${c.contactId}.2`)).toBe(true);
      }

      // 导出 through nginx: every record of the task is in the file.
      const exported = await fetch(
        `${site}/api/project/${api.projectId}/calls/export?format=csv&taskId=${task.id}`,
        {
          headers: api.headers,
        },
      );
      expect(exported.status).toBe(200);
      expect(exported.headers.get('content-disposition')).toContain('.csv');
      const csv = await exported.text();
      const rows = csv.trim().split(/\r?\n/).slice(1);
      expect(rows).toHaveLength(calls.length);
      for (const c of calls) expect(csv).toContain(c.id);

      // Webhooks: the task's end once, and each call's end under one event id, whichever worker sent it.
      const finished = await until(
        async () => received.filter((r) => r.type === 'task.finished' && r.data.id === task.id),
        (list) => list.length >= 1,
        'task.finished at the receiver',
        30_000,
      );
      expect(new Set(finished.map((r) => r.id)).size).toBe(1);
      expect(finished[0]!.data.state).toBe('completed');
      const expectedCalls = [testCallId, ...calls.map((c) => c.id)].sort();
      const endedIds = await until(
        async () => {
          const byCall = new Map<string, Set<string>>();
          for (const r of received.filter((x) => x.type === 'call.ended')) {
            byCall.set(r.data.id!, (byCall.get(r.data.id!) ?? new Set()).add(r.id));
          }
          return byCall;
        },
        (byCall) => byCall.size >= expectedCalls.length,
        'call.ended of every call at the receiver',
        90_000,
      );
      expect([...endedIds.keys()].sort()).toEqual(expectedCalls);
      for (const [callId, ids] of endedIds) expect([callId, ids.size]).toEqual([callId, 1]);

      stream.stop();
      await stream.done;
    }, 300_000);
  },
);
