import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { migrationsDir } from '../lib/paths';
import * as schema from './schema';

export type Schema = typeof schema;
/** The common ground of both drivers: services are written once against it. */
export type Database = PgDatabase<PgQueryResultHKT, Schema>;
export type DatabaseKind = 'pglite' | 'postgres';

export interface DatabaseHandle {
  db: Database;
  kind: DatabaseKind;
  migrate(): Promise<void>;
  ping(): Promise<void>;
  /** Postgres NOTIFY: reaches every process listening on this database, this one included. */
  notify(channel: string, payload: string): Promise<void>;
  /** Postgres LISTEN; resolves once subscribed, with a function that unsubscribes. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * The same database through connections of its own (`size` of them, opened on first use, named
   * by `name`; closed with the handle): for a control path that must not wait in the pool's queue
   * behind the bulk of the process's queries, as the dialer's claims would behind 200 calls'
   * writes. PGlite has one connection: its own db.
   */
  lane(name: string, size: number): Database;
  close(): Promise<void>;
}

export type OpenDatabaseOptions =
  | { kind: 'postgres'; url: string; poolSize?: number }
  | { kind: 'pglite'; dataDir: string }
  | { kind: 'pglite'; client: PGlite };

/** Lives in DATA_DIR next to later siblings (recordings, uploads), so the database gets its own folder. */
export const pgliteDir = (dataDir: string) => path.join(dataDir, 'pglite');

/** Another live process holds the embedded database of this DATA_DIR. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: number,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by another server process (pid ${holder}); stop it or choose another DATA_DIR`,
    );
  }
}

// PGlite is single-process: a second server on the same DATA_DIR would corrupt it, so we
// refuse to start instead. A lock left by a killed process is taken over once its pid is gone.
export function acquireDataDirLock(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const lockPath = path.join(dataDir, 'server.lock');
  const write = () => fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
  try {
    write();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const holder = Number.parseInt(fs.readFileSync(lockPath, 'utf8'), 10);
    if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
      throw new DataDirInUseError(dataDir, holder);
    }
    fs.rmSync(lockPath, { force: true });
    write();
  }
  return () => {
    try {
      if (fs.readFileSync(lockPath, 'utf8') === String(process.pid)) fs.rmSync(lockPath, { force: true });
    } catch {
      // already gone
    }
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed server whose parent has not reaped it yet still answers signal 0 as a zombie.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

// Shutdown paths (signal, onClose hook, test teardown) may each try to close; only the first acts.
const once = (fn: () => Promise<void>) => {
  let done: Promise<void> | undefined;
  return () => {
    done ??= fn();
    return done;
  };
};

/**
 * A pool whose clients may lose their connection (the server restarts) without crashing the
 * process: an idle client's error is heard by the pool's handler, and a checked-out one's (a
 * transaction awaiting its caller) by its own, since pg-pool only listens on idle clients and an
 * 'error' nobody hears kills the process. The query in progress fails on its own; the pool drops
 * the broken client when it is released.
 */
function survivesRestarts(pool: pg.Pool): pg.Pool {
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.kind === 'postgres') {
    const pool = survivesRestarts(
      new pg.Pool({ connectionString: options.url, max: options.poolSize ?? 10 }),
    );
    const listeners = new Set<pg.Client>();
    const lanes = new Map<string, { pool: pg.Pool; db: Database }>();
    const db = drizzlePg(pool, { schema }) as unknown as Database;
    return {
      db,
      kind: 'postgres',
      async migrate() {
        // Several processes may start together on one database; the advisory lock makes
        // exactly one of them apply pending migrations while the others wait.
        const client = await pool.connect();
        try {
          await client.query('SELECT pg_advisory_lock(7262021)');
          await migratePg(drizzlePg(client, { schema }), { migrationsFolder: migrationsDir() });
        } finally {
          await client.query('SELECT pg_advisory_unlock(7262021)').catch(() => {});
          client.release();
        }
      },
      async ping() {
        await db.execute(sql`select 1`);
      },
      notify: (channel, payload) => pool.query('SELECT pg_notify($1, $2)', [channel, payload]).then(() => {}),
      async listen(channel, onPayload) {
        // LISTEN binds to one session, so it holds a dedicated client for as long as it lasts,
        // and a new one when the server drops it (a restart): notifications resume by themselves.
        let stopped = false;
        let current: pg.Client | null = null;
        const subscribe = async (): Promise<pg.Client> => {
          const client = new pg.Client({ connectionString: options.url });
          let lost = false;
          const onLost = () => {
            if (lost) return;
            lost = true;
            listeners.delete(client);
            if (current === client) current = null;
            client.end().catch(() => {});
            if (!stopped) void resubscribe();
          };
          client.on('error', onLost);
          client.on('end', onLost);
          client.on('notification', (msg) => {
            if (msg.channel === channel) onPayload(msg.payload ?? '');
          });
          try {
            await client.connect();
            await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
          } catch (err) {
            lost = true;
            client.end().catch(() => {});
            throw err;
          }
          listeners.add(client);
          current = client;
          return client;
        };
        const resubscribe = async () => {
          for (let delay = 200; !stopped; delay = Math.min(delay * 2, 5000)) {
            await new Promise((resolve) => setTimeout(resolve, delay).unref());
            if (stopped) return;
            try {
              const client = await subscribe();
              if (stopped) await client.end().catch(() => {});
              return;
            } catch {
              // Still unreachable: try again later.
            }
          }
        };
        await subscribe();
        return async () => {
          stopped = true;
          const client = current;
          current = null;
          if (client) {
            listeners.delete(client);
            await client.end().catch(() => {});
          }
        };
      },
      lane(name, size) {
        let lane = lanes.get(name);
        if (!lane) {
          const own = survivesRestarts(new pg.Pool({ connectionString: options.url, max: size }));
          lane = { pool: own, db: drizzlePg(own, { schema }) as unknown as Database };
          lanes.set(name, lane);
        }
        return lane.db;
      },
      close: once(async () => {
        await Promise.all([...listeners].map((c) => c.end().catch(() => {})));
        await Promise.all([...lanes.values()].map((l) => l.pool.end().catch(() => {})));
        await pool.end();
      }),
    };
  }

  let client: PGlite;
  let release = () => {};
  if ('client' in options) {
    client = options.client;
  } else {
    release = acquireDataDirLock(options.dataDir);
    try {
      client = await PGlite.create(pgliteDir(options.dataDir));
    } catch (err) {
      release();
      throw err;
    }
  }
  const db = drizzlePglite(client, { schema }) as unknown as Database;
  return {
    db,
    kind: 'pglite',
    async migrate() {
      await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder: migrationsDir() });
    },
    async ping() {
      await client.query('select 1');
    },
    notify: (channel, payload) => client.query('SELECT pg_notify($1, $2)', [channel, payload]).then(() => {}),
    async listen(channel, onPayload) {
      const unsubscribe = await client.listen(channel, onPayload);
      return async () => {
        if (!client.closed) await unsubscribe();
      };
    },
    lane: () => db,
    close: once(async () => {
      try {
        if (!client.closed) await client.close();
      } finally {
        release();
      }
    }),
  };
}
