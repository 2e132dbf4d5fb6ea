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
