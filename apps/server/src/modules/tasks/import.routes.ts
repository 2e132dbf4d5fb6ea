import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ModuleOptions } from '../index';

/** Contact imports of a task: upload or paste, map columns, preview, commit, rejected rows. */
export const taskImportRoutes: FastifyPluginAsyncZod<ModuleOptions> = async () => {};
