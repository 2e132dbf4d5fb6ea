import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot, serverEntry } from './paths';
import { type Child, freePort, httpRequest, type Scope, spawnNode, tempDir, waitForOk } from './proc';

export const DEMO_EMAIL = 'demo@example.com';
// Only ever lives in a throw-away DATA_DIR on loopback, so a fixed value is fine.
export const DEMO_PASSWORD = 'bench-demo-password';

// Variables the server reads (apps/server/src/env.ts). Inherited values are dropped so that a
// developer's DATABASE_URL or WEB_DIST cannot silently turn the benchmark into a different setup.
const SERVER_VARS = [
  'NODE_ENV',
  'PORT',
  'HOST',
  'DATA_DIR',
  'DATABASE_URL',
  'DATABASE_POOL_SIZE',
  'DEMO',
  'DEMO_EMAIL',
  'DEMO_PASSWORD',
  'LOG_LEVEL',
  'TRUST_PROXY',
  'SHUTDOWN_TIMEOUT_MS',
  'WEB_DIST',
];

export function serverEnv(dataDir: string, port: number, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SERVER_VARS) delete env[name];
  return {
    ...env,
    NODE_ENV: 'production',
    DATA_DIR: dataDir,
    PORT: String(port),
    // Loopback only: the benchmark must not expose a server with a known demo password.
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DEMO_PASSWORD,
    ...extra,
  };
}

/** Runs the repo's incremental build once, so every benchmark measures the current sources. */
export function ensureBuilt(): void {
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'scripts/build.mjs')], {
    cwd: repoRoot,
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error(`node scripts/build.mjs failed (exit ${r.status ?? r.signal})`);
}

export interface RunningServer {
  child: Child;
  baseUrl: string;
  dataDir: string;
  /** From spawn until /healthz answered 200. */
  readyMs: number;
}

/** Spawns the built server the way production runs it and waits until /healthz answers 200. */
export async function startServer(
  scope: Scope,
  opts: { dataDir?: string; timeoutMs?: number; name?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<RunningServer> {
  if (!fs.existsSync(serverEntry)) {
    throw new Error(`${path.relative(repoRoot, serverEntry)} is missing; run node scripts/build.mjs`);
  }
  const dataDir = opts.dataDir ?? tempDir(scope, 'data');
  const port = await freePort();
  const started = performance.now();
  const child = spawnNode(scope, opts.name ?? 'server', [serverEntry], {
    cwd: repoRoot,
    env: serverEnv(dataDir, port, opts.env),
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForOk(`${baseUrl}/healthz`, child, { intervalMs: 50, timeoutMs: opts.timeoutMs ?? 60_000 });
  return { child, baseUrl, dataDir, readyMs: performance.now() - started };
}

/** Logs in as the demo user and returns the bearer token. */
export async function login(baseUrl: string): Promise<string> {
  const res = await httpRequest(`${baseUrl}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: DEMO_EMAIL, password: DEMO_PASSWORD }),
  });
  const token =
    res.status === 200 ? (JSON.parse(res.body) as { data?: { token?: unknown } }).data?.token : null;
  if (typeof token !== 'string' || token === '') {
    throw new Error(`POST /auth/login answered ${res.status} without data.token: ${res.body.slice(0, 300)}`);
  }
  return token;
}

/**
 * Waits until the demo project's background history is complete (/healthz says `demoHistory:
 * ready`): its calls and tasks made, none live, every recording mixed. A server still producing it spends a core on that, which would be
 * measured as the API's cost.
 */
export async function demoSettled(baseUrl: string, token: string, timeoutMs = 600_000): Promise<number> {
  const started = performance.now();
  const headers = { authorization: `Bearer ${token}` };
  const get = async <T>(path: string): Promise<T> => {
    const res = await httpRequest(`${baseUrl}${path}`, { headers });
    if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${res.body.slice(0, 300)}`);
    return (JSON.parse(res.body) as { data: T }).data;
  };
  const projectId = (await get<{ projects: { id: string }[] }>('/api/user/current')).projects[0]?.id;
  if (!projectId) throw new Error('the demo user has no project');
  let state = 'no answer yet';
  // The server says when it is done (/healthz demoHistory); the list checks below confirm it.
  for (;;) {
    const history = (await get<{ demoHistory?: string }>('/healthz')).demoHistory;
    if (history === 'ready') break;
    if (history === 'failed') throw new Error('the server reports that producing the demo history failed');
    if (history === 'off') throw new Error('the server runs without the demo: nothing to measure against');
    if (performance.now() - started > timeoutMs) {
      throw new Error(`the demo history was still ${history} after ${Math.round(timeoutMs / 1000)} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  while (performance.now() - started < timeoutMs) {
    type Page = { total: number; items: { status: string; recording: string }[] };
    const calls: Page['items'] = [];
    for (let page = 1; ; page++) {
      const list = await get<Page>(`/api/project/${projectId}/calls?pageSize=100&page=${page}`);
      calls.push(...list.items);
      if (calls.length >= list.total || list.items.length === 0) break;
    }
    const tasks = await get<{ items: { id: string; state: string }[] }>(
      `/api/project/${projectId}/tasks?pageSize=100`,
    );
    const demoTasks = tasks.items.filter((t) => t.id.startsWith('demo-task-'));
    const live = calls.filter((c) => c.status !== 'ended').length;
    const mixing = calls.filter((c) => c.recording === 'pending').length;
    const dialling = demoTasks.filter((t) => t.state === 'running' || t.state === 'pending').length;
    state = `${calls.length} calls, ${live} live, ${mixing} recordings mixing, ${demoTasks.length} demo tasks (${dialling} dialling)`;
    if (calls.length >= 200 && live === 0 && mixing === 0 && demoTasks.length >= 3 && dialling === 0) {
      return performance.now() - started;
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  throw new Error(`the demo history did not settle in ${Math.round(timeoutMs / 1000)} s: ${state}`);
}
