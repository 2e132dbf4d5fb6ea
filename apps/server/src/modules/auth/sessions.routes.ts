import { envelope, errorEnvelope, sessionIdParams, userSession } from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { requireUser } from '../../plugins/auth';
import { recordAudit } from '../audit/audit.service';
import type { ModuleOptions } from '../module-options';
import { revokedToken } from './session-cache';
import { endUserSession, listUserSessions } from './sessions.service';
import { describeDevice } from './user-agent';

/** 登录设备: a user's own sessions, and ending any of them. */
export const sessionsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = ['用户'];
  const security = [{ bearerAuth: [] }];

  app.get(
    '/api/user/sessions',
    {
      schema: {
        tags,
        security,
        summary: '当前用户的登录设备（有效会话），本设备在前',
        response: { 200: envelope(z.array(userSession)), 401: errorEnvelope },
      },
      onRequest: app.authenticate,
    },
    async (req) => {
      const user = requireUser(req);
      return ok(await listUserSessions(db, user.id, user.tokenHash));
    },
  );

  app.delete(
    '/api/user/sessions/:id',
    {
      schema: {
        tags,
        security,
        summary: '让一个登录设备下线（其令牌立即失效）；结束本设备即退出登录',
        params: sessionIdParams,
        response: {
          200: envelope(z.object({ current: z.boolean() })),
          400: errorEnvelope,
          401: errorEnvelope,
          404: errorEnvelope,
        },
      },
      onRequest: app.authenticate,
    },
    async (req) => {
      const user = requireUser(req);
      const ended = await db.transaction(async (tx) => {
        const rows = await endUserSession(tx, user.id, req.params.id);
        for (const row of rows)
          await recordAudit(tx, {
            projectId: null,
            userId: user.id,
            actor: user.email,
            action: 'auth.session_ended',
            targetType: 'session',
            targetId: req.params.id,
            summary: `${describeDevice(row.userAgent)}（${row.ip || '未知 IP'}）`,
            ip: req.ip,
          });
        return rows;
      });
      // Evicted here at once; other processes hear it over NOTIFY (their cache holds a token 30 s at most).
      for (const row of ended) await app.revokeSessions(revokedToken(row.tokenHash));
      return ok({ current: ended.some((row) => row.tokenHash === user.tokenHash) });
    },
  );
};
