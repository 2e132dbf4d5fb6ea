import { envelope, errorEnvelope, loginRequest, sessionToken } from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { requireUser } from '../../plugins/auth';
import type { ModuleOptions } from '../index';
import { loginWithPassword } from './auth.service';
import { revokedToken } from './session-cache';
import { deleteSession } from './sessions.service';

export const authRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  app.post(
    '/auth/login',
    {
      schema: {
        tags: ['认证'],
        summary: '登录，返回访问令牌',
        body: loginRequest,
        response: { 200: envelope(sessionToken), 400: errorEnvelope, 401: errorEnvelope },
      },
    },
    async (req) => {
      const session = await loginWithPassword(db, req.body, {
        userAgent: req.headers['user-agent'] ?? '',
        ip: req.ip,
      });
      return ok({ token: session.token, expiresAt: session.expiresAt.toISOString() });
    },
  );

  app.get(
    '/auth/logout',
    {
      schema: {
        tags: ['认证'],
        summary: '退出登录，令牌立即失效',
        security: [{ bearerAuth: [] }],
        response: { 200: envelope(z.null()), 401: errorEnvelope },
      },
      preHandler: app.authenticate,
    },
    async (req) => {
      const { tokenHash } = requireUser(req);
      await deleteSession(db, tokenHash);
      await app.revokeSessions(revokedToken(tokenHash));
      return ok(null);
    },
  );
};
