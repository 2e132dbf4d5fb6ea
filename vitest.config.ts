import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

const serverRoot = path.resolve(import.meta.dirname, 'apps/server');

/**
 * The server test files that open a database, relative to apps/server: only these need the
 * second pass on PostgreSQL; a database-free file would run the same code twice. A test gets a
 * database only through test/helpers.ts (createTestDatabase, createTestApp) or reads TEST_DB, so a
 * file qualifies when it or a test-support file it imports (transitively: under test/ or testing/,
 * or *test-support.ts, *.test-helper.ts) names one of those. Product code is not followed: it opens none of its own.
 */
function databaseTestFiles(): string[] {
  const marker = /\b(createTestDatabase|createTestApp|TEST_DB|openDatabase)\b/;
  const cache = new Map<string, boolean>();
  const isSupport = (file: string) =>
    /^test\/|\/testing\/|test-support\.ts$|\.test-helper\.ts$|\.test\.ts$/.test(
      path.relative(serverRoot, file).split(path.sep).join('/'),
    );
  const resolve = (from: string, spec: string) => {
    const base = path.resolve(path.dirname(from), spec);
    return [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')].find(
      (candidate) => fs.existsSync(candidate) && fs.statSync(candidate).isFile(),
    );
  };
  const touches = (file: string, seen: Set<string>): boolean => {
    const known = cache.get(file);
    if (known !== undefined) return known;
    if (seen.has(file)) return false;
    seen.add(file);
    const text = fs.readFileSync(file, 'utf8');
    let result = marker.test(text);
    for (const [, spec] of text.matchAll(/(?:from|import\(|import)\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
      if (result) break;
      const target = resolve(file, spec!);
      if (target && isSupport(target)) result = touches(target, seen);
    }
    cache.set(file, result);
    return result;
  };
  return serverTestFiles().filter((file) => touches(path.join(serverRoot, file), new Set()));
}

/** Every server test file, relative to apps/server. */
function serverTestFiles(): string[] {
  const walk = (dir: string): string[] =>
    fs.readdirSync(path.join(serverRoot, dir), { withFileTypes: true }).flatMap((entry) => {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(rel);
      return rel.endsWith('.test.ts') ? [rel] : [];
    });
  return ['src', 'test'].flatMap(walk).sort();
}

/**
 * Files that run calls in real time on loopback: RTP paced every 20 ms, SIP timers, SIPp,
 * baresip and Kamailio processes. They mostly wait, but a CPU-bound neighbour can delay a packet
 * past the jitter buffer or a timer past its check, and two of them can meet on a port, so they
 * run after everything else, one file at a time.
 */
const REALTIME = /^(src\/engine\/telephony\/(sip|media)\/|src\/runtime\/sip-|test\/kamailio\/)/;

const serverProject = (name: string, db: 'pglite' | 'pg', realtime: boolean) => ({
  test: {
    name,
    root: './apps/server',
    include: (db === 'pg' ? databaseTestFiles() : serverTestFiles()).filter(
      (file) => REALTIME.test(file) === realtime,
    ),
    environment: 'node',
    globalSetup: ['./test/global-setup.ts'],
    setupFiles: ['./test/setup.ts'],
    env: { TEST_DB: db },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Server test files share a worker's loaded modules (fastify, drizzle, PGlite, the contracts)
    // instead of importing them again per file, a second or more each. They leave no global state:
    // every test builds its own app on its own database, and no test file mocks a module.
    isolate: false,
    ...(realtime ? { sequence: { groupOrder: 1 }, maxWorkers: 1 } : {}),
  },
});

/** Every unit and integration suite; the e2e suite has its own config (e2e/vitest.config.ts). */
export default defineConfig({
  test: {
    // Vitest's default (one less than the cores) is a single worker on CI's two cores, which left
    // one core idle whenever a test waited on a timer, a socket or PostgreSQL.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    projects: [
      { test: { name: 'contracts', root: './packages/contracts', include: ['src/**/*.test.ts'] } },
      './apps/web/vitest.config.ts',
      serverProject('server', 'pglite', false),
      serverProject('server-realtime', 'pglite', true),
      // The server's database tests again on a real PostgreSQL when one is provided (CI does).
      ...(process.env.TEST_DATABASE_URL
        ? [serverProject('server-pg', 'pg', false), serverProject('server-pg-realtime', 'pg', true)]
        : []),
    ],
  },
});
