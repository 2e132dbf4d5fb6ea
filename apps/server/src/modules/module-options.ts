import type { Database, DatabaseHandle } from '../db/client';
import type { Env } from '../env';
import type { Runtime } from '../runtime/runtime';

/** What every HTTP module receives: the database, the environment and this process's runtime. */
export interface ModuleOptions {
  db: Database;
  database: DatabaseHandle;
  env: Env;
  version: string;
  /** The call engine of this process (see runtime/runtime.ts); route files only use it. */
  runtime: Runtime;
}
