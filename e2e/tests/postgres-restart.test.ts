import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { type PrivatePostgres, postgresBin, startPrivatePostgres } from '../support/postgres';
import { login, type RunningServer, startServer, stopServer, tempDir } from '../support/server';

const bin = postgresBin();
const running: RunningServer[] = [];
const clusters: PrivatePostgres[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of running) await stopServer(s, 'SIGKILL');
  for (const c of clusters) c.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const chinaDate = (ms: number) => new Date(ms + 8 * 3600_000).toISOString().slice(0, 10);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (!bin) {
  // CI installs PostgreSQL (.ci/run); a developer machine without it cannot run this one test.
  console.warn('postgres-restart: skipped, no PostgreSQL programs under /usr/lib/postgresql/*/bin');
}

describe.skipIf(!bin)('PostgreSQL restarted in the middle of a running task', () => {
  it('the server reconnects by itself, the task completes, no contact is dialled beyond its attempts, no call is lost', async () => {
    const pg = await startPrivatePostgres(bin!);
    clusters.push(pg);
    const dir = tempDir('pg-restart');
    dirs.push(dir);
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: pg.url,
      DEMO: 'on',
      DEMO_PASSWORD: 'pg-restart',
      SIM_TIME_SCALE: '50',
    };
    const server = await startServer(env);
    running.push(server);
    let exitedWith: number | string | null = null;
    server.exited.then((code) => {
      exitedWith = code;
    });
    const token = await login(server.url, 'demo@example.com', 'pg-restart');
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const me = (await (await fetch(`${server.url}/api/user/current`, { headers })).json()) as {
      data: { projects: { id: string }[] };
    };
    const projectId = me.data.projects[0]!.id;
    const call = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${server.url}/api/project/${projectId}${url}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      // biome-ignore lint/suspicious/noExplicitAny: answers of several routes, checked field by field below
      const json = (await res.json()) as { data: any; message: string };
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${json.message}`);
      return json.data;
    };
    const assistants = await call('GET', '/assistants?pageSize=50');
    const assistant = assistants.items.find((a: { publishedVersion: number | null }) => a.publishedVersion);
    const now = Date.now();
    const task = await call('POST', '/tasks', {
      name: '数据库重启',
      assistantId: assistant.id,
      startDate: chinaDate(now - 24 * 3600_000),
      endDate: chinaDate(now + 30 * 24 * 3600_000),
      windows: [{ days: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '24:00' }],
      skipHolidays: false,
      concurrency: 6,
      dailyCapPerNumber: 0,
      retryRules: {
        interrupted: { maxRetries: 1, intervalMinutes: 1 },
        no_answer: { maxRetries: 1, intervalMinutes: 1 },
        busy: { maxRetries: 1, intervalMinutes: 1 },
      },
    });
    const phones = Array.from({ length: 24 }, (_, i) => `1390001${String(i).padStart(4, '0')}`);
    const preview = await call('POST', `/tasks/${task.id}/imports/paste`, { text: phones.join('\n') });
    await call('POST', `/tasks/${task.id}/imports/${preview.importId}/commit`, {
      importId: preview.importId,
      mapping: preview.mapping,
    });
    await call('POST', `/tasks/${task.id}/actions/start`);

    for (let i = 0; ; i++) {
      const detail = await call('GET', `/tasks/${task.id}`);
      if (detail.activeCalls >= 3 && detail.counts.finished >= 1) break;
      if (i > 600) throw new Error('the task never got under way');
      await sleep(50);
    }
    // Every connection is cut while calls are live; the database is back about a second later.
    pg.restart('fast');

    // Reconnected by itself: no restart of the server, /healthz answers again.
    for (let i = 0; ; i++) {
      const res = await fetch(`${server.url}/healthz`).catch(() => null);
      if (res?.ok) break;
      if (i > 300) throw new Error(`the server did not reconnect:\n${server.output()}`);
      await sleep(100);
    }
    for (let i = 0; ; i++) {
      const detail = await call('GET', `/tasks/${task.id}`).catch(() => null);
      if (detail?.state === 'completed') break;
      if (i > 600)
        throw new Error(`the task did not complete after the restart: ${JSON.stringify(detail?.counts)}`);
      await sleep(100);
    }
    expect(exitedWith).toBeNull();

    const contacts = (await call('GET', `/tasks/${task.id}/contacts?pageSize=100`)).items;
    const calls = (await call('GET', `/calls?taskId=${task.id}&pageSize=100`)).items as Array<{
      id: string;
      contactId: string;
      endReason: string;
      status: string;
    }>;
    expect(contacts).toHaveLength(24);
    for (const contact of contacts) {
      // A final state for every contact, never more attempts than the retry rules allow...
      expect(['done', 'failed', 'skipped']).toContain(contact.status);
      expect(contact.attempts).toBeLessThanOrEqual(2);
      // ...and exactly one call record per attempt: none dialled twice, none lost.
      const own = calls.filter((c) => c.contactId === contact.id).map((c) => c.id);
      expect(own.sort()).toEqual(
        Array.from({ length: contact.attempts }, (_, i) => `${contact.id}.${i + 1}`),
      );
    }
    for (const c of calls) expect(c.status).toBe('ended');
    // A call cut off by the outage is closed as 系统中断 and, unless its callee opted out, called again.
    for (const c of calls.filter((x) => x.endReason === 'interrupted' && x.id.endsWith('.1'))) {
      const contact = contacts.find((x: { id: string }) => x.id === c.contactId);
      if (contact.status === 'skipped') continue;
      expect(
        calls.some((other) => other.id === `${c.contactId}.2`),
        JSON.stringify({ call: c, contact, log: server.output().slice(-4000) }),
      ).toBe(true);
    }
    expect(server.output()).not.toMatch(/unhandled|uncaught/i);
  }, 120_000);
});
