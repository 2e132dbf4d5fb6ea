import type { Env } from '../env';
import { type DatabaseHandle, openDatabase } from './client';

/** The database the environment names: PostgreSQL when DATABASE_URL is set, else PGlite in DATA_DIR. */
export function openFromEnv(env: Env): Promise<DatabaseHandle> {
  return env.DATABASE_URL
    ? openDatabase({ kind: 'postgres', url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE })
    : openDatabase({ kind: 'pglite', dataDir: env.dataDir });
}
