import {
  envelope,
  errorEnvelope,
  oidcCallbackRequest,
  oidcConfig,
  oidcLoginResult,
  oidcStart,
} from '@callpilot/contracts';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../../lib/errors';
import { ok } from '../../lib/reply';
import type { ModuleOptions } from '../module-options';
import { completeOidcLogin, createOidcClient, oidcSettings, startOidcLogin } from './oidc.service';

export const oidcRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env }) => {
  const settings = oidcSettings(env);
  const client = settings ? createOidcClient(settings, app.log) : null;
  const requireClient = () => {
    if (!client) throw notFound('未配置第三方登录');
    return client;
  };
  // The provider only accepts the redirect_uri registered for us, so start and callback must
  // build the same one; PUBLIC_URL pins it when the server sits behind a proxy.
  const redirectUri = (req: FastifyRequest) =>
    `${(env.PUBLIC_URL ?? `${req.protocol}://${req.host}`).replace(/\/+$/, '')}/third-login`;

  app.get(
    '/auth/oidc/config',
    {
      schema: {
        tags: ['认证'],
        summary: '第三方登录是否可用及其显示名称',
        response: { 200: envelope(oidcConfig) },
      },
    },
    async () => ok({ enabled: client !== null, name: env.OIDC_NAME }),
  );

  app.get(
    '/auth/oidc/start',
    {
      schema: {
        tags: ['认证'],
        summary: '发起第三方登录，返回认证服务的授权地址',
        querystring: z.object({ redirect: z.string().max(2048).optional() }),
        response: { 200: envelope(oidcStart), 400: errorEnvelope, 404: errorEnvelope, 502: errorEnvelope },
      },
    },
    async (req) =>
      ok(
        await startOidcLogin(db, requireClient(), {
          redirectUri: redirectUri(req),
          redirect: req.query.redirect,
        }),
      ),
  );

  app.post(
    '/auth/oidc/callback',
    {
      schema: {
        tags: ['认证'],
        summary: '完成第三方登录，返回访问令牌',
        body: oidcCallbackRequest,
        response: {
          200: envelope(oidcLoginResult),
          400: errorEnvelope,
          403: errorEnvelope,
          404: errorEnvelope,
          502: errorEnvelope,
        },
      },
    },
    async (req) =>
      ok(
        await completeOidcLogin(
          db,
          requireClient(),
          { ...req.body, redirectUri: redirectUri(req) },
          { userAgent: req.headers['user-agent'] ?? '', ip: req.ip },
        ),
      ),
  );
};
