import {
  changePasswordRequest,
  codeSent,
  codeVerified,
  currentUser,
  envelope,
  errorEnvelope,
  profileUpdate,
  resetPasswordByCodeRequest,
  sendCodeRequest,
  verifyCodeQuery,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { requireUser } from '../../plugins/auth';
import { publicRateLimit } from '../../plugins/rate-limits';
import { publicBaseUrl } from '../auth/auth.routes';
import { changePassword, endAllSessions } from '../auth/auth.service';
import {
  checkResetCode,
  resetPasswordByCode,
  sendPasswordLink,
  sendResetCode,
} from '../auth/passwords.service';
import { revokedUser } from '../auth/session-cache';
import type { ModuleOptions } from '../module-options';
import { getCurrentUser, updateProfile } from './users.service';

export const usersRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env, sleep }) => {
  const tags = ['用户'];
  const security = [{ bearerAuth: [] }];
  // Authentication runs at onRequest, so an anonymous caller gets 401 before any validation message.
  const failures = { 400: errorEnvelope, 401: errorEnvelope, 429: errorEnvelope };

  for (const url of ['/api/user/current', '/api/profile']) {
    app.get(
      url,
      {
        schema: {
          tags,
          security,
          summary: '当前用户与所属项目',
          response: { 200: envelope(currentUser), 401: errorEnvelope },
        },
        onRequest: app.authenticate,
      },
      async (req) => ok(await getCurrentUser(db, requireUser(req), app.userProjects)),
    );
  }

  app.put(
    '/api/profile',
    {
      schema: {
        tags,
        security,
        summary: '修改昵称与简介',
        body: profileUpdate,
        response: { 200: envelope(currentUser), ...failures },
      },
      onRequest: app.authenticate,
    },
    async (req) => {
      const user = await updateProfile(db, requireUser(req), req.body);
      // Cached sessions carry the old name; evict them so every process reads the new one.
      await app.revokeSessions(revokedUser(user.id));
      return ok(user);
    },
  );

  app.put(
    '/api/user/password',
    {
      schema: {
        tags,
        security,
        summary: '修改密码（需当前密码），其他设备上的会话结束',
        body: changePasswordRequest,
        response: { 200: envelope(z.null()), ...failures },
      },
      onRequest: app.authenticate,
    },
    async (req) => {
      const user = requireUser(req);
      await changePassword(db, user, req.body, req.ip, { sleep });
      await app.revokeSessions(revokedUser(user.id));
      return ok(null);
    },
  );

  app.post(
    '/api/user/send_code',
    {
      config: publicRateLimit('sendCode'),
      schema: {
        tags,
        summary: '找回密码：向邮箱或手机号发送验证码（无论账号是否存在，应答相同）',
        body: sendCodeRequest,
        response: { 200: envelope(codeSent), ...failures },
      },
    },
    async (req) => ok(await sendResetCode(db, app.providers, req.body.target)),
  );

  app.get(
    '/api/user/verify_code',
    {
      config: publicRateLimit('checkCode'),
      schema: {
        tags,
        summary: '找回密码：校验验证码（不消耗，错误计入尝试次数）',
        querystring: verifyCodeQuery,
        response: { 200: envelope(codeVerified), ...failures },
      },
    },
    async (req) => {
      await checkResetCode(db, req.query.target, req.query.code);
      return ok({ valid: true as const });
    },
  );

  app.post(
    '/api/user/reset_pwd',
    {
      config: publicRateLimit('checkCode'),
      schema: {
        tags,
        summary: '找回密码：凭验证码设置新密码，该用户的所有会话结束',
        body: resetPasswordByCodeRequest,
        response: { 200: envelope(z.null()), ...failures },
      },
    },
    async (req) => {
      const userId = await resetPasswordByCode(db, req.body, req.ip);
      await endAllSessions(db, userId);
      await app.revokeSessions(revokedUser(userId));
      return ok(null);
    },
  );

  app.post(
    '/api/user/send_change_pwd_email',
    {
      schema: {
        tags,
        security,
        summary: '向当前用户的邮箱发送修改密码链接',
        response: { 200: envelope(codeSent), ...failures },
      },
      onRequest: app.authenticate,
    },
    async (req) =>
      ok(
        await sendPasswordLink(db, app.providers, {
          email: requireUser(req).email,
          baseUrl: publicBaseUrl(req, env.PUBLIC_URL),
          purpose: 'change_password',
        }),
      ),
  );
};
