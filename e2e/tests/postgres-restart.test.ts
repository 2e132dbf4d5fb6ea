import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { type PrivatePostgres, postgresBin, startPrivatePostgres } from '../support/postgres';
import {
  checkedTaskOutcome,
  openProjectApi,
  startRetryingTask,
  taskCompleted,
  taskUnderWay,
} from '../support/project-api';
import { type RunningServer, startServer, stopServer, tempDir } from '../support/server';

const bin = postgresBin();
const running: RunningServer[] = [];
const clusters: PrivatePostgres[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of running) await stopServer(s, 'SIGKILL');
  for (const c of clusters) c.stop();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

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
    const api = await openProjectApi(server.url, 'demo@example.com', 'pg-restart');
    const taskId = await startRetryingTask(api, '数据库重启', '1390001');
    await taskUnderWay(api, taskId);
    // Every connection is cut while calls are live; the database is back about a second later.
    pg.restart('fast');

    // Reconnected by itself: no restart of the server, /healthz answers again.
    for (let i = 0; ; i++) {
      const res = await fetch(`${server.url}/healthz`).catch(() => null);
      if (res?.ok) break;
      if (i > 300) throw new Error(`the server did not reconnect:\n${server.output()}`);
      await sleep(100);
    }
    await taskCompleted(api, taskId, 60_000);
    // The same process all along: it never exited.
    expect(exitedWith).toBeNull();
    const { contacts, calls } = await checkedTaskOutcome(api, taskId);
    // A call cut off by the outage is closed as 系统中断 and, unless its callee opted out, called again.
    for (const c of calls.filter((x) => x.endReason === 'interrupted' && x.id.endsWith('.1'))) {
      const contact = contacts.find((x) => x.id === c.contactId)!;
      if (contact.status === 'skipped') continue;
      expect(
        calls.some((other) => other.id === `${c.contactId}.2`),
        JSON.stringify({ call: c, contact, log: server.output().slice(-4000) }),
      ).toBe(true);
    }
    expect(server.output()).not.toMatch(/unhandled|uncaught/i);
  }, 120_000);
});
