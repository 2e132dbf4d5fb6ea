import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { inject } from 'vitest';
import { type App, buildApp } from '../src/app';
import { type Database, type DatabaseHandle, openDatabase } from '../src/db/client';
import {
  memberships,
  oemConfigs,
  oneTimeCodes,
  outbox,
  projectLimits,
  projects,
  sessions,
  users,
} from '../src/db/schema';
import { type Env, parseEnv } from '../src/env';
import { hashPassword } from '../src/modules/auth/password';
import { captureProviders } from '../src/providers';

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

/**
 * The app on a fresh database; `close` tears both down. E-mail and SMS are captured in
 * `emails` / `sms`, so tests read codes the way a user would, from the message.
 */
export async function createTestApp(
  options: {
    env?: Record<string, string>;
    logger?: Parameters<typeof buildApp>[0]['logger'];
    clock?: Parameters<typeof buildApp>[0]['clock'];
    sleep?: Parameters<typeof buildApp>[0]['sleep'];
    trunks?: Parameters<typeof buildApp>[0]['trunks'];
  } = {},
) {
  const database = await createTestDatabase();
  const capture = captureProviders();
  const app = await buildApp({
    database,
    env: testEnv(options.env),
    logger: options.logger ?? false,
    providers: capture.providers,
    clock: options.clock,
    sleep: options.sleep,
    trunks: options.trunks,
  });
  app.addHook('onClose', () => database.close());
  return { app, database, db: database.db, emails: capture.emails, sms: capture.sms };
}

/** The six digits of the last code sent in a captured message. */
export const codeIn = (message: { text: string } | undefined) => {
  const code = /\b(\d{6})\b/.exec(message?.text ?? '')?.[1];
  if (!code) throw new Error('no code in the message');
  return code;
};

/** The reset token of the last link sent in a captured e-mail. */
export const tokenIn = (message: { text: string } | undefined) => {
  const token = /token=([A-Za-z0-9_-]+)/.exec(message?.text ?? '')?.[1];
  if (!token) throw new Error('no link token in the message');
  return token;
};

const hashes = new Map<string, Promise<string>>();
/** scrypt is deliberately slow: each password is hashed once per test file. */
export const hashOnce = (password: string) => {
  let hash = hashes.get(password);
  if (!hash) {
    hash = hashPassword(password);
    hashes.set(password, hash);
  }
  return hash;
};

export const PASSWORD = 'secret-pass-1';

/** A user, and unless `project` is null a project they own (with its limits row). */
export async function seedUser(
  db: Database,
  options: { email: string; phone?: string; password?: string; project?: string | null; disabled?: boolean },
) {
  const userId = randomUUID();
  await db.insert(users).values({
    id: userId,
    email: options.email,
    phone: options.phone ?? null,
    passwordHash: await hashOnce(options.password ?? PASSWORD),
    displayName: options.email.split('@')[0]!,
  });
  if (options.project === null) return { userId, projectId: '' };
  const projectId = randomUUID();
  await db.insert(projects).values({
    id: projectId,
    name: options.project ?? `${options.email}的项目`,
    disabled: options.disabled ?? false,
  });
  await db.insert(memberships).values({ projectId, userId, role: 'owner' });
  await db.insert(projectLimits).values({ projectId });
  return { userId, projectId };
}

type Injectable = { inject: App['inject'] };

/** Logs in by e-mail and answers the bearer header. */
export async function loginAs(app: Injectable, email: string, password = PASSWORD) {
  const res = await app.inject({ method: 'POST', url: '/auth/login', payload: { email, password } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`);
  return { authorization: `Bearer ${res.json().data.token as string}` };
}

/** Row counts of every table a request could change, to assert that a rejected one changed nothing. */
export async function tableCounts(db: Database) {
  const tables = { users, projects, memberships, sessions, projectLimits, oneTimeCodes, outbox, oemConfigs };
  const counts: Record<string, number> = {};
  for (const [name, table] of Object.entries(tables)) {
    counts[name] = (await db.select({ n: sql<number>`count(*)::int` }).from(table))[0]!.n;
  }
  return counts;
}
