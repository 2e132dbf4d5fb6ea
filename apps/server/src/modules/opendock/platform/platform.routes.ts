import { apiKeyIdentity, envelope, errorEnvelope } from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ok } from '../../../lib/reply';
import { OPENDOCK_PREFIX, requireApiKey } from '../../../plugins/api-key-auth';
import type { ModuleOptions } from '../../module-options';
import { buildOpendockDocument, OPENDOCK_DOCUMENT_URL } from './openapi';

/** The open API's own routes: the key check a customer starts with, and the API's document. */
export const opendockPlatformRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { version }) => {
  app.get(
    `${OPENDOCK_PREFIX}/me`,
    {
      config: { anyScope: true },
      schema: {
        tags: ['开放接口'],
        summary: '当前 API 密钥（检查密钥是否可用及其权限）',
        response: { 200: envelope(apiKeyIdentity), 401: errorEnvelope, 403: errorEnvelope },
      },
    },
    async (req) => {
      const key = requireApiKey(req);
      return ok({
        keyId: key.id,
        projectId: key.projectId,
        name: key.name,
        scopes: key.scopes,
        rateLimitPerMinute: key.rateLimitPerMinute,
      });
    },
  );

  // Built on first request: by then every route is registered and the whole document exists.
  let document: object | undefined;
  app.get(
    OPENDOCK_DOCUMENT_URL,
    { config: { public: true }, schema: { hide: true } },
    async (_req, reply) => {
      document ??= buildOpendockDocument(
        app.swagger() as unknown as Parameters<typeof buildOpendockDocument>[0],
        app.opendockRoutes,
        version,
      );
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(document));
    },
  );
};
