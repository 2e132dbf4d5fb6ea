import type { Database, DatabaseHandle } from '../db/client';
import type { Env } from '../env';
import type { Runtime } from '../runtime/runtime';
import type { Sleep } from './auth/login-limit';

/** What every HTTP module receives: the database, the environment and this process's runtime. */
export interface ModuleOptions {
  db: Database;
  database: DatabaseHandle;
  env: Env;
  version: string;
  /** The call engine of this process (see runtime/runtime.ts); route files only use it. */
  runtime: Runtime;
  /** How deliberate waits happen (the per-IP login delay); a real timer unless a test passes one. */
  sleep?: Sleep;
}
