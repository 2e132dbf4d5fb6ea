import {
  envelope,
  errorEnvelope,
  projectIdParams,
  smsMessage,
  smsOptOut,
  smsOptOutAddRequest,
  smsOptOutList,
  smsOptOutListQuery,
  smsSendRequest,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { requireManager, requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { enqueueSms, listOptOuts, recordOptOut, removeOptOut } from './sms-send.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };

/**
 * 发送短信 (one at a time from the console) and the SMS do-not-disturb list. Any member sends, as
 * any member runs a task; taking a number off the list is the owner's or an admin's decision, since
 * the customer asked for it.
 */
export const smsMessagesRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, runtime }) => {
  const tags = ['短信管理'];
  const security = [{ bearerAuth: [] }];
  const base = '/api/project/:projectId/sms';

  app.post(
    `${base}/messages`,
    {
      schema: {
        tags,
        security,
        summary: '发送一条短信（已通过审核的签名和模板；推广短信仅 08:00–20:00 发送，其余时间排队等待）',
        params: projectIdParams,
        body: smsSendRequest,
        response: { 201: envelope(smsMessage), ...guarded, 409: errorEnvelope },
      },
    },
    async (req, reply) => {
      const project = requireProject(req);
      const message = await enqueueSms(db, {
        ...req.body,
        projectId: project.id,
        source: 'single',
        createdBy: req.user?.id ?? null,
      });
      runtime.sms.wake();
      return reply.status(201).send(ok(message));
    },
  );

  app.get(
    `${base}/opt-outs`,
    {
      schema: {
        tags,
        security,
        summary: '短信免打扰名单（回复退订或手动添加的号码）',
        params: projectIdParams,
        querystring: smsOptOutListQuery,
        response: { 200: envelope(smsOptOutList), ...guarded },
      },
    },
    async (req) => ok(await listOptOuts(db, requireProject(req).id, req.query)),
  );

  app.post(
    `${base}/opt-outs`,
    {
      schema: {
        tags,
        security,
        summary: '将号码加入短信免打扰名单',
        params: projectIdParams,
        body: smsOptOutAddRequest,
        response: { 201: envelope(smsOptOut), ...guarded },
      },
    },
    async (req, reply) =>
      reply.status(201).send(ok(await recordOptOut(db, requireProject(req).id, req.body.phone, 'manual'))),
  );

  app.delete(
    `${base}/opt-outs/:phone`,
    {
      schema: {
        tags,
        security,
        summary: '将号码移出短信免打扰名单（所有者或管理员）',
        params: projectIdParams.extend({ phone: z.string().min(1).max(20) }),
        response: { 200: envelope(z.null()), ...guarded },
      },
    },
    async (req) => {
      const project = requireProject(req);
      requireManager(project, '仅项目所有者或管理员可以将号码移出免打扰名单');
      await removeOptOut(db, project.id, req.params.phone);
      return ok(null);
    },
  );
};
