import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const serverBundle = path.join(repoRoot, 'apps/server/dist/main.js');

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });

export const tempDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), `callpilot-${prefix}-`));

export interface RunningServer {
  url: string;
  port: number;
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code (or signal name) once the process is gone. */
  exited: Promise<number | string>;
}

/**
 * Starts a server process. `command` 'npm-start' runs the README's `npm start` (in its own
 * process group, so a kill reaches the server behind npm); 'bundle' runs the built server directly.
 */
export async function startServer(
  env: Record<string, string>,
  options: { command?: 'npm-start' | 'bundle'; waitForHealth?: boolean; timeoutMs?: number } = {},
): Promise<RunningServer> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const command = options.command ?? 'bundle';
  const [bin, args] = command === 'npm-start' ? ['npm', ['start']] : [process.execPath, [serverBundle]];
  const child = spawn(bin, args, {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env, PORT: String(port) },
    detached: command === 'npm-start',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const server: RunningServer = { url: `http://127.0.0.1:${port}`, port, child, output: () => out, exited };
  if (options.waitForHealth !== false) await waitForHealth(server, options.timeoutMs ?? 60_000);
  return server;
}

export async function waitForHealth(server: RunningServer, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  server.exited.then(() => {
    gone = true;
  });
  while (Date.now() < deadline) {
    if (gone) throw new Error(`server exited before it was healthy:\n${server.output()}`);
    try {
      const res = await fetch(`${server.url}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server not healthy after ${timeoutMs} ms:\n${server.output()}`);
}

export async function stopServer(server: RunningServer, signal: NodeJS.Signals = 'SIGTERM') {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return server.exited;
  if (server.child.spawnargs[0] === 'npm') process.kill(-server.child.pid!, signal);
  else server.child.kill(signal);
  return server.exited;
}

export async function login(baseUrl: string, email: string, password: string): Promise<string> {
  const res = await fetch(`${baseUrl}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const body = (await res.json()) as { data: { token: string } };
  if (!res.ok) throw new Error(`login failed: ${JSON.stringify(body)}`);
  return body.data.token;
}
