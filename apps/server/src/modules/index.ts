import type { FastifyPluginAsync } from 'fastify';
import type { Database, DatabaseHandle } from '../db/client';
import type { Clock } from '../engine/clock';
import type { Env } from '../env';
import { assistantsRoutes } from './assistants/assistants.routes';
import { voicesRoutes } from './assistants/voices.routes';
import { authRoutes } from './auth/auth.routes';
import type { Sleep } from './auth/login-limit';
import { callsRoutes } from './calls/calls.routes';
import { doNotCallRoutes } from './do-not-call/do-not-call.routes';
import { healthRoutes } from './health/health.routes';
import { knowledgeRoutes } from './knowledge/knowledge.routes';
import { llmProvidersRoutes } from './llm-providers/llm-providers.routes';
import { numbersRoutes } from './numbers/numbers.routes';
import { oemRoutes } from './oem/oem.routes';
import { oidcRoutes } from './oidc/oidc.routes';
import { projectsRoutes } from './projects/projects.routes';
import { taskImportRoutes } from './tasks/import.routes';
import { tasksRoutes } from './tasks/tasks.routes';
import { usersRoutes } from './users/users.routes';

export interface ModuleOptions {
  db: Database;
  database: DatabaseHandle;
  env: Env;
  version: string;
  /** The call engine's clock; the system clock (scaled by SIM_TIME_SCALE) unless a test passes one. */
  clock?: Clock;
  /** How deliberate waits happen (the per-IP login delay); a real timer unless a test passes one. */
  sleep?: Sleep;
}

/** Every HTTP module, registered by app.ts from this one list. */
export const modules: FastifyPluginAsync<ModuleOptions>[] = [
  healthRoutes,
  authRoutes,
  usersRoutes,
  projectsRoutes,
  oemRoutes,
  oidcRoutes,
  doNotCallRoutes,
  assistantsRoutes,
  voicesRoutes,
  knowledgeRoutes,
  llmProvidersRoutes,
  callsRoutes,
  numbersRoutes,
  tasksRoutes,
  taskImportRoutes,
];
