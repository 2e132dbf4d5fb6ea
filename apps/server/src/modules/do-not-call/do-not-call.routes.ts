import {
  doNotCallCreateRequest,
  doNotCallEntry,
  doNotCallList,
  doNotCallListQuery,
  entityId,
  envelope,
  errorEnvelope,
  projectIdParams,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { addToDoNotCall, listDoNotCall, removeFromDoNotCall } from './do-not-call.service';

const failures = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };

export const doNotCallRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = ['免打扰名单'];
  const security = [{ bearerAuth: [] }];

  app.get(
    '/api/project/:projectId/do-not-call',
    {
      schema: {
        tags,
        security,
        summary: '免打扰名单（按号码模糊查询）',
        params: projectIdParams,
        querystring: doNotCallListQuery,
        response: { 200: envelope(doNotCallList), ...failures },
      },
    },
    async (req) => ok(await listDoNotCall(db, requireProject(req).id, req.query)),
  );

  app.post(
    '/api/project/:projectId/do-not-call',
    {
      schema: {
        tags,
        security,
        summary: '加入免打扰名单（号码自动去除 +86、空格与横线）',
        params: projectIdParams,
        body: doNotCallCreateRequest,
        response: { 200: envelope(doNotCallEntry), ...failures },
      },
    },
    async (req) =>
      ok(await addToDoNotCall(db, requireProject(req).id, req.body.phone, 'manual', req.body.reason)),
  );

  app.delete(
    '/api/project/:projectId/do-not-call/:phone',
    {
      schema: {
        tags,
        security,
        summary: '移出免打扰名单',
        params: projectIdParams.extend({ phone: entityId('号码') }),
        response: { 200: envelope(z.null()), ...failures },
      },
    },
    async (req) => {
      await removeFromDoNotCall(db, requireProject(req).id, req.params.phone);
      return ok(null);
    },
  );
};
