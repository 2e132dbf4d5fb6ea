import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

// Everything a benchmark starts is tracked here as well as in its own Scope, so that a
// Ctrl-C or a crash in the runner still leaves no server holding a port or a temp dir behind.
const liveChildren = new Set<ChildProcess>();
const liveDirs = new Set<string>();
const liveOthers = new Set<() => void>();

/**
 * Adds a synchronous kill to the last-resort cleanup, for processes started by someone else's
 * code (Kamailio, in a process group of its own that a Ctrl-C does not reach); returns its removal.
 */
export function atEmergency(kill: () => void): () => void {
  liveOthers.add(kill);
  return () => liveOthers.delete(kill);
}

/** Last-resort, synchronous cleanup for process exit and signals: no time for graceful stops. */
export function emergencyCleanup(): void {
  for (const child of liveChildren) child.kill('SIGKILL');
  liveChildren.clear();
  for (const kill of liveOthers) kill();
  liveOthers.clear();
  for (const dir of liveDirs) fs.rmSync(dir, { recursive: true, force: true });
  liveDirs.clear();
}

type Task = () => unknown;

/** Cleanup tasks run in reverse order (stop the server before deleting its data dir), even on failure. */
export class Scope {
  #tasks: Task[] = [];

  defer(task: Task): void {
    this.#tasks.push(task);
  }

  async close(): Promise<void> {
    for (let task = this.#tasks.pop(); task; task = this.#tasks.pop()) {
      try {
        await task();
      } catch (err) {
        console.error(`  cleanup step failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
}

export async function withScope<T>(fn: (scope: Scope) => Promise<T>): Promise<T> {
  const scope = new Scope();
  try {
    return await fn(scope);
  } finally {
    await scope.close();
  }
}

export function tempDir(scope: Scope, label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `callpilot-bench-${label}-`));
  liveDirs.add(dir);
  scope.defer(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  });
  return dir;
}

/** Asks the kernel for a free loopback port; the tiny race until the child binds it is acceptable here. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

export interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  readonly exit: Promise<ExitInfo>;
  hasExited(): boolean;
  /** The tail of stdout+stderr, to explain a failed start. */
  output(): string;
  /** SIGTERM, wait for the exit (SIGKILL after graceMs); resolves with how long the shutdown took. */
  stop(graceMs?: number): Promise<ExitInfo & { stopMs: number; killed: boolean }>;
}

const OUTPUT_TAIL = 16 * 1024;

export const describeExit = (e: ExitInfo) =>
  e.error ? `spawn error: ${e.error.message}` : e.signal ? `signal ${e.signal}` : `code ${e.code}`;

export function spawnNode(
  scope: Scope,
  name: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): Child {
  return spawnChild(scope, name, process.execPath, args, opts);
}

/**
 * Any program (SIPp), tracked like a node child: stopped by its scope or by a Ctrl-C. `ipc`
 * opens Node's message channel (`proc.send`, 'message') to a node child.
 */
export function spawnChild(
  scope: Scope,
  name: string,
  command: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; ipc?: boolean },
): Child {
  const proc = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: opts.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  liveChildren.add(proc);
  let tail = '';
  // Both pipes must be drained, or a chatty child blocks on a full pipe and skews the timings.
  const collect = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL);
  };
  proc.stdout?.on('data', collect);
  proc.stderr?.on('data', collect);

  let exited: ExitInfo | null = null;
  const exit = new Promise<ExitInfo>((resolve) => {
    proc.once('exit', (code, signal) => {
      exited = { code, signal };
      liveChildren.delete(proc);
      resolve(exited);
    });
    proc.once('error', (error) => {
      // 'exit' may never follow a failed spawn, so settle here too.
      exited ??= { code: null, signal: null, error };
      liveChildren.delete(proc);
      resolve(exited);
    });
  });

  const child: Child = {
    name,
    proc,
    exit,
    hasExited: () => exited !== null,
    output: () => tail.trim(),
    async stop(graceMs = 15_000) {
      const started = performance.now();
      if (exited) return { ...exited, stopMs: 0, killed: false };
      proc.kill('SIGTERM');
      const timer = sleep(graceMs, 'timeout' as const);
      let killed = false;
      if ((await Promise.race([exit, timer])) === 'timeout') {
        killed = true;
        proc.kill('SIGKILL');
      }
      const info = await exit;
      return { ...info, stopMs: performance.now() - started, killed };
    },
  };
  scope.defer(() => child.stop());
  return child;
}

/**
 * A TypeScript module of the bench (an RTP probe, a SIP worker) in a node process of its own,
 * with Node's message channel open: its timing then does not depend on the bench's process.
 */
export function spawnTsModule(scope: Scope, name: string, script: string, env: NodeJS.ProcessEnv): Child {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return spawnChild(scope, name, process.execPath, ['--import', tsx, script], {
    cwd: path.dirname(script),
    env: { ...process.env, ...env },
    ipc: true,
  });
}

/** The child's next IPC message of this type; fails after timeoutMs, or at once if the child exits. */
export function nextMessage<M extends { type: string }, T extends M['type']>(
  child: Child,
  type: T,
  timeoutMs: number,
): Promise<Extract<M, { type: T }>> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      child.proc.off('message', onMessage);
      child.proc.off('exit', onExit);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${child.name} sent no ${type} within ${timeoutMs} ms\n${child.output()}`));
    }, timeoutMs);
    const onMessage = (message: M) => {
      if (message.type !== type) return;
      done();
      resolve(message as Extract<M, { type: T }>);
    };
    const onExit = () => {
      done();
      reject(new Error(`${child.name} exited before sending ${type}\n${child.output()}`));
    };
    child.proc.on('message', onMessage);
    child.proc.once('exit', onExit);
  });
}

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One request on its own connection: no keep-alive agent, so nothing holds a socket open that
 * would delay a server's graceful shutdown or leak into the next measurement.
 */
export function httpRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<HttpResponse> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: opts.method ?? 'GET',
        headers: { connection: 'close', ...opts.headers },
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url} did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * Polls until the URL answers 200. Fails fast when the child dies, with its output, because
 * waiting out the timeout would only hide the real start-up error.
 */
export async function waitForOk(
  url: string,
  child: Child,
  opts: { intervalMs?: number; timeoutMs: number },
): Promise<void> {
  const intervalMs = opts.intervalMs ?? 50;
  const deadline = performance.now() + opts.timeoutMs;
  let last = 'no answer yet';
  for (;;) {
    try {
      const res = await httpRequest(url, { timeoutMs: 2000 });
      if (res.status === 200) return;
      last = `status ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (child.hasExited()) {
      const info = await child.exit;
      throw new Error(
        `${child.name} exited (${describeExit(info)}) before ${url} answered 200.\n--- output ---\n${child.output()}`,
      );
    }
    if (performance.now() > deadline) {
      throw new Error(
        `${url} did not answer 200 within ${opts.timeoutMs} ms (last: ${last}).\n--- output ---\n${child.output()}`,
      );
    }
    await sleep(intervalMs);
  }
}
