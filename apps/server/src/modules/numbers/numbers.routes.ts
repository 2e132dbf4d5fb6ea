import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ModuleOptions } from '../index';

/** 外显号码: the project's caller numbers. */
export const numbersRoutes: FastifyPluginAsyncZod<ModuleOptions> = async () => {};
