import {
  codeSent,
  envelope,
  errorEnvelope,
  loginRequest,
  registerRequest,
  resetPasswordDoneRequest,
  resetPasswordMailRequest,
  sessionToken,
  smsCaptchaRequest,
} from '@callpilot/contracts';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { requireUser } from '../../plugins/auth';
import { publicRateLimit } from '../../plugins/rate-limits';
import { recordAudit } from '../audit/audit.service';
import type { ModuleOptions } from '../module-options';
import { type ClientMeta, endAllSessions, login, refreshSession, register } from './auth.service';
import { resetPasswordByLink, sendLoginCode, sendPasswordLink } from './passwords.service';
import { revokedToken, revokedUser } from './session-cache';
import { deleteSession } from './sessions.service';

export const clientMeta = (req: FastifyRequest): ClientMeta => ({
  userAgent: req.headers['user-agent'] ?? '',
  ip: req.ip,
});

const tokenAnswer = (s: { token: string; expiresAt: Date }) =>
  ok({ token: s.token, expiresAt: s.expiresAt.toISOString() });

/** Where links in e-mail point: the configured public URL, else the origin the request came to. */
export const publicBaseUrl = (req: FastifyRequest, configured: string | undefined) =>
  configured ?? `${req.protocol}://${req.host}`;

export const authRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env, sleep }) => {
  const tags = ['认证'];
  // Authentication runs at onRequest, so an anonymous caller gets 401 before any validation message.
  const failures = { 400: errorEnvelope, 401: errorEnvelope, 409: errorEnvelope, 429: errorEnvelope };

  app.post(
    '/auth/login',
    {
      schema: {
        tags,
        summary: '登录（邮箱+密码、手机号+密码或手机号+短信验证码），返回访问令牌',
        body: loginRequest,
        response: { 200: envelope(sessionToken), ...failures },
      },
    },
    async (req) => tokenAnswer(await login(db, req.body, clientMeta(req), { sleep })),
  );

  app.post(
    '/auth/register',
    {
      config: publicRateLimit('register'),
      schema: {
        tags,
        summary: '注册账号并登录（随后登记项目）',
        body: registerRequest,
        response: { 200: envelope(sessionToken), ...failures },
      },
    },
    async (req) => tokenAnswer(await register(db, req.body, clientMeta(req))),
  );

  app.post(
    '/auth/sms-captcha',
    {
      config: publicRateLimit('sendCode'),
      schema: {
        tags,
        summary: '发送登录短信验证码（无论手机号是否注册，应答相同）',
        body: smsCaptchaRequest,
        response: { 200: envelope(codeSent), ...failures },
      },
    },
    async (req) => ok(await sendLoginCode(db, app.providers, req.body.phone)),
  );

  app.post(
    '/auth/refresh-token',
    {
      schema: {
        tags,
        summary: '换发访问令牌，旧令牌立即失效',
        security: [{ bearerAuth: [] }],
        response: { 200: envelope(sessionToken), 401: errorEnvelope },
      },
      onRequest: app.authenticate,
    },
    async (req) => {
      const user = requireUser(req);
      const session = await refreshSession(db, user.id, user.tokenHash, clientMeta(req));
      await app.revokeSessions(revokedToken(user.tokenHash));
      return tokenAnswer(session);
    },
  );

  app.get(
    '/auth/logout',
    {
      schema: {
        tags,
        summary: '退出登录，令牌立即失效',
        security: [{ bearerAuth: [] }],
        response: { 200: envelope(z.null()), 401: errorEnvelope },
      },
      onRequest: app.authenticate,
    },
    async (req) => {
      const user = requireUser(req);
      await db.transaction(async (tx) => {
        await deleteSession(tx, user.tokenHash);
        await recordAudit(tx, {
          projectId: null,
          userId: user.id,
          actor: user.email,
          action: 'auth.logout',
          ip: req.ip,
        });
      });
      await app.revokeSessions(revokedToken(user.tokenHash));
      return ok(null);
    },
  );

  app.post(
    '/auth/reset_password',
    {
      config: publicRateLimit('sendCode'),
      schema: {
        tags,
        summary: '发送重置密码链接邮件（无论邮箱是否注册，应答相同）',
        body: resetPasswordMailRequest,
        response: { 200: envelope(codeSent), ...failures },
      },
    },
    async (req) =>
      ok(
        await sendPasswordLink(db, app.providers, {
          email: req.body.email,
          baseUrl: publicBaseUrl(req, env.PUBLIC_URL),
          purpose: 'reset_link',
        }),
      ),
  );

  app.post(
    '/auth/reset_password_done',
    {
      config: publicRateLimit('checkCode'),
      schema: {
        tags,
        summary: '通过邮件链接设置新密码，该用户的所有会话结束',
        body: resetPasswordDoneRequest,
        response: { 200: envelope(z.null()), ...failures },
      },
    },
    async (req) => {
      const userId = await resetPasswordByLink(db, req.body, req.ip);
      await endAllSessions(db, userId);
      await app.revokeSessions(revokedUser(userId));
      return ok(null);
    },
  );
};
