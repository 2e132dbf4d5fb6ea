import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/db/client';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    pgTemplate: string;
  }
}

export const PG_TEMPLATE_DB = 'callpilot_test_template';

/**
 * Initialising PGlite costs 4-6 s, so it happens once: the migrated data directory is dumped
 * to a file and every test database is loaded from it (well under a second).
 * On PostgreSQL the same idea is a template database that each test copies.
 */
export default async function setup(project: TestProject) {
  // Global setup runs in the main process, where the project's `env` is not applied.
  if (project.config.env?.TEST_DB === 'pg') {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('TEST_DB=pg needs TEST_DATABASE_URL');
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${PG_TEMPLATE_DB} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${PG_TEMPLATE_DB}`);
    await admin.end();
    const templateUrl = new URL(url);
    templateUrl.pathname = `/${PG_TEMPLATE_DB}`;
    const handle = await openDatabase({ kind: 'postgres', url: templateUrl.toString(), poolSize: 1 });
    await handle.migrate();
    await handle.close();
    project.provide('pgTemplate', PG_TEMPLATE_DB);
    project.provide('pgliteTemplate', '');
    return;
  }
  const client = await PGlite.create();
  const handle = await openDatabase({ kind: 'pglite', client });
  await handle.migrate();
  const dump = await client.dumpDataDir('none');
  await client.close();
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'callpilot-template-')), 'pglite.tar');
  fs.writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', file);
  project.provide('pgTemplate', '');
  return () => fs.rmSync(path.dirname(file), { recursive: true, force: true });
}
