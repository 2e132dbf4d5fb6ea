import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { inject } from 'vitest';
import { buildApp } from '../src/app';
import { type DatabaseHandle, openDatabase } from '../src/db/client';
import { type Env, parseEnv } from '../src/env';

/** A fresh, migrated database for one test: PGlite by default, PostgreSQL when TEST_DB=pg. */
export async function createTestDatabase(): Promise<DatabaseHandle> {
  if (process.env.TEST_DB === 'pg') {
    const url = process.env.TEST_DATABASE_URL!;
    const name = `callpilot_test_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('pgTemplate')}`);
    await admin.end();
    const dbUrl = new URL(url);
    dbUrl.pathname = `/${name}`;
    const handle = await openDatabase({ kind: 'postgres', url: dbUrl.toString(), poolSize: 4 });
    let dropped: Promise<void> | undefined;
    const drop = async () => {
      await handle.close();
      const a = new pg.Client({ connectionString: url });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    };
    return {
      ...handle,
      close() {
        dropped ??= drop();
        return dropped;
      },
    };
  }
  const tar = fs.readFileSync(inject('pgliteTemplate'));
  const client = await PGlite.create({ loadDataDir: new Blob([tar]) });
  return openDatabase({ kind: 'pglite', client });
}

export function testEnv(overrides: Record<string, string> = {}): Env {
  return parseEnv({ LOG_LEVEL: 'silent', NODE_ENV: 'test', ...overrides });
}

/** The app on a fresh database; `close` tears both down. */
export async function createTestApp(options: { env?: Record<string, string> } = {}) {
  const database = await createTestDatabase();
  const app = await buildApp({ database, env: testEnv(options.env), logger: false });
  app.addHook('onClose', () => database.close());
  return { app, database, db: database.db };
}
