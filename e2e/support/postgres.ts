import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './server';

/** The newest installed PostgreSQL's programs, or null when there is none. */
export function postgresBin(): string | null {
  const base = '/usr/lib/postgresql';
  if (!fs.existsSync(base)) return null;
  const versions = fs
    .readdirSync(base)
    .filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b));
  const newest = versions.at(-1);
  return newest ? path.join(base, newest, 'bin') : null;
}

export interface PrivatePostgres {
  url: string;
  /** `pg_ctl restart`: every connection is cut, the server is back when this resolves. */
  restart(mode: 'fast' | 'immediate'): void;
  stop(): void;
}

/**
 * A PostgreSQL cluster of this test's own, on a free port in a temporary directory: a test that
 * restarts it cannot disturb the suites sharing CI's PostgreSQL. Run as the `postgres` user when
 * the test runs as root (initdb refuses root), as .ci/run does.
 */
export async function startPrivatePostgres(bin: string): Promise<PrivatePostgres> {
  const port = await freePort();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'callpilot-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    try {
      execFileSync('id', ['postgres'], { stdio: 'ignore' });
    } catch {
      execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    }
    execFileSync('chown', ['postgres', root]);
  }
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const run = (program: string, args: string[]) => {
    const argv = [path.join(bin, program), ...args];
    if (asRoot)
      execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', argv.map(quote).join(' ')], { stdio: 'pipe' });
    else execFileSync(argv[0]!, argv.slice(1), { stdio: 'pipe' });
  };
  const data = path.join(root, 'data');
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  run('pg_ctl', ['-D', data, '-w', '-l', path.join(root, 'log'), '-o', options, 'start']);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart(mode) {
      run('pg_ctl', ['-D', data, '-w', '-m', mode, '-l', path.join(root, 'log'), '-o', options, 'restart']);
    },
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
      } catch {
        // Already stopped.
      }
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
