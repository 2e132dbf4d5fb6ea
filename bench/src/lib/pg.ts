import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, type Scope, tempDir } from './proc';

const PG_ROOT = '/usr/lib/postgresql';

/** The newest installed PostgreSQL's bin directory (Debian layout, as .ci/run uses). */
export function pgBin(): string {
  const versions = fs.existsSync(PG_ROOT)
    ? fs
        .readdirSync(PG_ROOT)
        .filter((v) => fs.existsSync(path.join(PG_ROOT, v, 'bin/initdb')))
        .sort((a, b) => Number(a) - Number(b))
    : [];
  const newest = versions.at(-1);
  if (!newest) {
    throw new Error(
      `no PostgreSQL under ${PG_ROOT}; install it (apt-get install postgresql) or set BENCH_DATABASE_URL`,
    );
  }
  return path.join(PG_ROOT, newest, 'bin');
}

export interface Postgres {
  url: string;
  /** Started by the benchmark (and removed at the end), or the caller's BENCH_DATABASE_URL. */
  throwaway: boolean;
}

/** PostgreSQL refuses to run as root, so as root the cluster belongs to the postgres user (like .ci/run). */
function postgresUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const r = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (r.status !== 0 || g.status !== 0) {
    throw new Error('running as root and there is no postgres user to own a throwaway cluster');
  }
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

function run(cmd: string, args: string[], as: { uid: number; gid: number } | null): void {
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    // The postgres user may not be able to enter the repo, so the tools run from the temp dir.
    cwd: os.tmpdir(),
    ...(as ? { uid: as.uid, gid: as.gid, env: { ...process.env, HOME: os.tmpdir() } } : {}),
  });
  if (r.status !== 0) {
    throw new Error(
      `${path.basename(cmd)} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stdout}${r.stderr}`,
    );
  }
}

/**
 * BENCH_DATABASE_URL when set; otherwise a throwaway cluster on a free loopback port in a temp
 * dir, fsync off (durability is not under test), stopped and deleted when the scope closes.
 */
export async function startPostgres(scope: Scope): Promise<Postgres> {
  const given = process.env.BENCH_DATABASE_URL;
  if (given) return { url: given, throwaway: false };

  const bin = pgBin();
  const owner = postgresUser();
  const root = tempDir(scope, 'pg');
  if (owner) fs.chownSync(root, owner.uid, owner.gid);
  const data = path.join(root, 'data');
  const port = await freePort();
  run(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'], owner);
  const options = [
    `-p ${port}`,
    `-k ${root}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    // The bulk load writes ~1 GB of WAL; no checkpoint storm in the middle of it.
    '-c max_wal_size=4GB',
  ].join(' ');
  run(
    path.join(bin, 'pg_ctl'),
    ['-D', data, '-w', '-l', path.join(root, 'log'), '-o', options, 'start'],
    owner,
  );

  // pg_ctl daemonises the postmaster, so the runner's child tracking cannot see it: a crash or
  // Ctrl-C of the runner kills it by pid from the exit hook (SIGQUIT = immediate shutdown).
  const pid = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const killOnExit = () => {
    try {
      process.kill(pid, 'SIGQUIT');
    } catch {
      // Already gone.
    }
  };
  process.on('exit', killOnExit);
  scope.defer(() => {
    process.off('exit', killOnExit);
    try {
      run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], owner);
    } catch {
      killOnExit();
    }
  });
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, throwaway: true };
}

/**
 * Runs SQL through psql (statement by statement from stdin, so VACUUM works) and resolves with
 * its unaligned, tuples-only output. Asynchronous: the server child's pipes keep draining meanwhile.
 */
export function psql(url: string, sql: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      path.join(pgBin(), 'psql'),
      ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', url, '-f', '-'],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out.trim()) : reject(new Error(`psql failed (exit ${code}): ${err.trim()}`)),
    );
    child.stdin.end(sql);
  });
}
