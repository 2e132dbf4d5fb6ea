import { currentUser, envelope, errorEnvelope } from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ok } from '../../lib/reply';
import { requireUser } from '../../plugins/auth';
import type { ModuleOptions } from '../index';
import { getCurrentUser } from './users.service';

export const usersRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const schema = {
    tags: ['用户'],
    security: [{ bearerAuth: [] }],
    response: { 200: envelope(currentUser), 401: errorEnvelope },
  };
  for (const url of ['/api/user/current', '/api/profile']) {
    app.get(
      url,
      { schema: { ...schema, summary: '当前用户与所属项目' }, preHandler: app.authenticate },
      async (req) => ok(await getCurrentUser(db, requireUser(req))),
    );
  }
};
