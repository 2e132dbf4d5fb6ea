import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { login, type RunningServer, serverBundle, startServer, stopServer, tempDir } from '../support/server';

const running: RunningServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await stopServer(s, 'SIGKILL');
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const dataDir = () => {
  const d = tempDir('proc');
  dirs.push(d);
  return d;
};
const start = async (...args: Parameters<typeof startServer>) => {
  const s = await startServer(...args);
  running.push(s);
  return s;
};

describe('the server process', () => {
  it('exits non-zero with one line naming each bad variable', () => {
    const r = spawnSync(process.execPath, [serverBundle], {
      env: { ...process.env, PORT: 'abc', DATA_DIR: dataDir() },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).not.toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Invalid environment variable PORT: /);
  });

  it('keeps committed data through kill -9 and restarts quickly', async () => {
    const dir = dataDir();
    const first = await start({ DATA_DIR: dir, DEMO_PASSWORD: 'survivor-pass' });
    const token = await login(first.url, 'demo@example.com', 'survivor-pass');
    await stopServer(first, 'SIGKILL');

    const t = Date.now();
    const second = await start({ DATA_DIR: dir, PORT: String(first.port) });
    const restartMs = Date.now() - t;
    const me = await fetch(`${second.url}/api/user/current`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { data: { projects: { name: string }[] } }).data.projects[0]!.name).toBe(
      '演示项目',
    );
    // The demo is not created twice, and the killed server's lock does not block the restart.
    expect(second.output()).not.toContain('Demo project created');
    expect(restartMs).toBeLessThan(15_000);
  });

  it('refuses a second server on the same embedded data directory', async () => {
    const dir = dataDir();
    await start({ DATA_DIR: dir, DEMO: 'off' });
    const second = await startServer({ DATA_DIR: dir, DEMO: 'off' }, { waitForHealth: false });
    running.push(second);
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain('is in use by another server process');
  });

  it('finishes in-flight requests on SIGTERM, then exits 0', async () => {
    // At info level the server logs each request it reads, which the test waits on below.
    const s = await start({ DATA_DIR: dataDir(), DEMO_PASSWORD: 'graceful-pass', LOG_LEVEL: 'info' });
    // Logins are deliberately slow (scrypt), so these are still running when the signal lands.
    const inFlight = Array.from({ length: 4 }, () =>
      fetch(`${s.url}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ email: 'demo@example.com', password: 'graceful-pass' }),
      }),
    );
    // Signal once the server has read all four (its request log says so): a server busy seeding the
    // demo right after start may take a moment to accept them, and a request arriving after the
    // signal is rightly refused with 503.
    const received = () =>
      s.output().match(/"url":"\/auth\/login"[^\n]*"msg":"incoming request"/g)?.length ?? 0;
    for (let i = 0; received() < 4; i++) {
      if (i > 400) throw new Error(`the server did not receive the logins:\n${s.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    s.child.kill('SIGTERM');
    const answers = await Promise.all(inFlight);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(await s.exited).toBe(0);
    await expect(fetch(`${s.url}/healthz`)).rejects.toThrow();
  });

  it.runIf(process.env.TEST_DATABASE_URL)('runs on PostgreSQL when DATABASE_URL is set', async () => {
    const adminUrl = process.env.TEST_DATABASE_URL!;
    const name = `callpilot_e2e_${Date.now()}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const dbUrl = new URL(adminUrl);
    dbUrl.pathname = `/${name}`;
    try {
      const s = await start({
        DATABASE_URL: dbUrl.toString(),
        DEMO_EMAIL: 'pg-demo@example.com',
        DEMO_PASSWORD: 'pg-demo-pass',
        DATA_DIR: dataDir(),
      });
      const health = (await (await fetch(`${s.url}/healthz`)).json()) as { data: { databaseKind: string } };
      expect(health.data.databaseKind).toBe('postgres');
      const token = await login(s.url, 'pg-demo@example.com', 'pg-demo-pass');
      await stopServer(s);
      // Data lives in PostgreSQL: a restart (which migrates again) still knows the session.
      const again = await start({ DATABASE_URL: dbUrl.toString(), DATA_DIR: dataDir() });
      const me = await fetch(`${again.url}/api/user/current`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(me.status).toBe(200);
      await stopServer(again);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
