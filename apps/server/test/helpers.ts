import { randomBytes, randomUUID, scrypt } from 'node:crypto';
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
  return openDatabase({ kind: 'pglite', client: await leasePglite() });
}

/**
 * Starting PGlite (WASM, then the postmaster on the template's data directory) costs about half a
 * second of CPU, most of a typical module test. A test database closed cleanly is emptied instead
 * (the session discarded, every table truncated) and handed to the next test of the worker, which
 * cannot tell it from a new one: migrations add no rows and no sequences. One whose schema a test
 * changed, or that a test left inside a transaction, is closed as before.
 */
const idlePglite: PGlite[] = [];
let pgliteTemplate: Blob | undefined;

/** Names a PGlite call through a lease that has ended, as a closed PGlite would refuse it. */
class LeaseEndedError extends Error {
  constructor() {
    super('PGlite is closed');
  }
}

async function leasePglite(): Promise<PGlite> {
  let client = idlePglite.pop();
  if (!client) {
    pgliteTemplate ??= new Blob([fs.readFileSync(inject('pgliteTemplate'))]);
    client = await PGlite.create({ loadDataDir: pgliteTemplate });
    templateSchema ??= await schemaFingerprint(client);
  }
  const real = client;
  let leased = true;
  let released: Promise<void> | undefined;
  const release = async () => {
    leased = false;
    try {
      // Work the test left running finishes first (PGlite runs one query at a time).
      await emptyPglite(real);
      // A file that holds several at once (two processes on one database) keeps only two spare.
      if (idlePglite.length >= 2) throw new Error('enough spares');
      idlePglite.push(real);
    } catch {
      // Left inside a transaction, its schema changed, or not needed: closed as before.
      await real.close().catch(() => {});
    }
  };
  // The test's handle: after close() nothing more reaches the shared instance, as before pooling
  // nothing reached a closed one (a late write of one test must not land in the next).
  return new Proxy(real, {
    get(target, prop) {
      if (prop === 'closed') return !leased || target.closed;
      if (prop === 'close') return () => (released ??= release());
      const value = Reflect.get(target, prop, target);
      if (typeof value !== 'function' || prop === 'constructor') return value;
      return (...args: unknown[]) => {
        if (!leased) throw new LeaseEndedError();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** What a test could have added beside rows: objects in any schema, triggers, functions. */
const SCHEMA_FINGERPRINT = `SELECT concat_ws(':',
  (SELECT count(*) FROM pg_class), (SELECT count(*) FROM pg_trigger), (SELECT count(*) FROM pg_proc),
  (SELECT count(*) FROM pg_namespace), (SELECT count(*) FROM pg_type)) AS schema`;
let templateSchema: string | undefined;

async function schemaFingerprint(client: PGlite) {
  const { rows } = await client.query<{ schema: string }>(SCHEMA_FINGERPRINT);
  return rows[0]!.schema;
}

async function emptyPglite(client: PGlite) {
  if (client.closed) throw new Error('closed');
  await client.exec('DISCARD ALL');
  // A test that changed the schema (hostile-input adds triggers) leaves a database no other
  // test may get: it is closed instead.
  if ((await schemaFingerprint(client)) !== templateSchema) throw new Error('schema changed');
  const { rows } = await client.query<{ name: string }>(
    `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = 'public'`,
  );
  if (rows.length)
    await client.exec(`TRUNCATE ${rows.map((r) => r.name).join(', ')} RESTART IDENTITY CASCADE`);
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
    sms?: Parameters<typeof buildApp>[0]['sms'];
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
    sms: options.sms,
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

/**
 * A seeded user's password hash: the product's format (see auth/password.ts), at a work factor of
 * 2^10 instead of 2^15. verifyPassword takes the factor from the stored hash, so a login goes the
 * same way and checks the same thing, for about 1 ms of CPU instead of 100 (a test logs in often);
 * hashes the product makes itself (sign-up, reset, demo) keep the full factor.
 */
const hashes = new Map<string, Promise<string>>();
export const hashOnce = (password: string) => {
  let hash = hashes.get(password);
  if (!hash) {
    const [N, r, p] = [2 ** 10, 8, 1];
    const salt = randomBytes(16);
    hash = new Promise<Buffer>((resolve, reject) =>
      scrypt(password.normalize('NFKC'), salt, 32, { N, r, p }, (err, key) =>
        err ? reject(err) : resolve(key),
      ),
    ).then((key) => ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$'));
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

/**
 * The cast of an isolation test: project A with its owner and a plain member, and an outsider who
 * owns project B. Each user's e-mail starts with `prefix` so several files can share a database.
 */
export async function seedTwoProjects(db: Database, app: Injectable, prefix = '') {
  const a = await seedUser(db, { email: `${prefix}owner@example.com` });
  const m = await seedUser(db, { email: `${prefix}member@example.com`, project: null });
  await db.insert(memberships).values({ projectId: a.projectId, userId: m.userId, role: 'member' });
  const b = await seedUser(db, { email: `${prefix}other@example.com` });
  return {
    a,
    b,
    member: m,
    owner: await loginAs(app, `${prefix}owner@example.com`),
    memberHeaders: await loginAs(app, `${prefix}member@example.com`),
    outsider: await loginAs(app, `${prefix}other@example.com`),
  };
}
