import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ModuleOptions } from '../module-options';
import { openAssistantsRoutes } from './open-assistants.routes';
import { openCallsRoutes } from './open-calls.routes';
import { openDoNotCallRoutes } from './open-do-not-call.routes';
import { openKnowledgeRoutes } from './open-knowledge.routes';
import { openSmsRoutes } from './open-sms.routes';
import { openTasksRoutes } from './open-tasks.routes';

/**
 * The open API's resources under /opendock/v1, one file each. The key check, scopes, rate
 * limits, idempotency and the request log apply to them by path (plugins/api-key-auth.ts and
 * opendock/platform/), so nothing here opts in; each route only names its scope.
 */
export const opendockRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, options) => {
  for (const resource of [
    openCallsRoutes,
    openTasksRoutes,
    openAssistantsRoutes,
    openKnowledgeRoutes,
    openDoNotCallRoutes,
    openSmsRoutes,
  ]) {
    await app.register(resource, options);
  }
};
