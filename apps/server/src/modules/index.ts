import type { FastifyPluginAsync } from 'fastify';
import type { Database, DatabaseHandle } from '../db/client';
import type { Env } from '../env';
import { assistantsRoutes } from './assistants/assistants.routes';
import { voicesRoutes } from './assistants/voices.routes';
import { authRoutes } from './auth/auth.routes';
import { doNotCallRoutes } from './do-not-call/do-not-call.routes';
import { healthRoutes } from './health/health.routes';
import { knowledgeRoutes } from './knowledge/knowledge.routes';
import { llmProvidersRoutes } from './llm-providers/llm-providers.routes';
import { oemRoutes } from './oem/oem.routes';
import { oidcRoutes } from './oidc/oidc.routes';
import { projectsRoutes } from './projects/projects.routes';
import { usersRoutes } from './users/users.routes';

export interface ModuleOptions {
  db: Database;
  database: DatabaseHandle;
  env: Env;
  version: string;
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
];
