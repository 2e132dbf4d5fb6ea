import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ModuleOptions } from '../index';

/** Call tasks (呼出任务): settings, state machine, contacts, preflight, live events, the dialer. */
export const tasksRoutes: FastifyPluginAsyncZod<ModuleOptions> = async () => {};
