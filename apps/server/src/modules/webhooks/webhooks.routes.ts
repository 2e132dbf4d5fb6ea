import {
  entityId,
  envelope,
  errorEnvelope,
  projectIdParams,
  WEBHOOK_EVENT_SAMPLES,
  WEBHOOK_TIMEOUT_MS,
  webhookDelivery,
  webhookDeliveryDetail,
  webhookDeliveryList,
  webhookDeliveryQuery,
  webhookEndpoint,
  webhookEndpointCreateRequest,
  webhookEndpointUpdateRequest,
  webhookSecret,
  webhookSecretRollRequest,
  webhookTestRequest,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { deliveryNotFound, WebhookService } from './webhooks.service';

const guarded = {
  400: errorEnvelope,
  401: errorEnvelope,
  403: errorEnvelope,
  404: errorEnvelope,
  409: errorEnvelope,
};
const BASE = '/api/project/:projectId/webhooks';
const endpointParams = projectIdParams.extend({ endpointId: entityId('接收地址 ID') });
const deliveryParams = endpointParams.extend({ deliveryId: entityId('投递记录 ID') });

/**
 * 开发者选项 → Webhooks: endpoints, their signing secrets, the delivery log, 发送测试事件 and
 * replays. Owners and admins change; members read the list and the log (never a secret).
 */
export const webhooksRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env, runtime }) => {
  const tags = ['Webhooks'];
  const security = [{ bearerAuth: [] }];
  const service = new WebhookService(db, {
    secret: loadAppSecret(env),
    allowPrivate: env.WEBHOOK_ALLOW_PRIVATE,
    now: () => runtime.clock.now(),
  });
  const { outbox, dispatcher } = runtime.webhooks;

  app.get(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: 'Webhook 接收地址列表（含最近 24 小时投递统计）',
        params: projectIdParams,
        response: { 200: envelope(z.array(webhookEndpoint)), ...guarded },
      },
    },
    async (req) => ok(await service.list(requireProject(req).id)),
  );

  app.post(
    BASE,
    {
      config: { audit: { action: 'webhook.changed', targetType: 'webhook', verb: '新增' } },
      schema: {
        tags,
        security,
        summary: '添加 Webhook 接收地址（生成 whsec_ 签名密钥）',
        params: projectIdParams,
        body: webhookEndpointCreateRequest,
        response: { 200: envelope(webhookEndpoint), ...guarded },
      },
    },
    async (req) => ok(await service.create(requireProject(req), req.user?.id ?? null, req.body)),
  );

  app.get(
    `${BASE}/:endpointId`,
    {
      schema: {
        tags,
        security,
        summary: 'Webhook 接收地址详情',
        params: endpointParams,
        response: { 200: envelope(webhookEndpoint), ...guarded },
      },
    },
    async (req) => ok(await service.get(requireProject(req).id, req.params.endpointId)),
  );

  app.put(
    `${BASE}/:endpointId`,
    {
      config: {
        audit: { action: 'webhook.changed', targetType: 'webhook', targetParam: 'endpointId', verb: '修改' },
      },
      schema: {
        tags,
        security,
        summary: '修改 Webhook 接收地址（地址、描述、订阅事件、启用/停用）',
        params: endpointParams,
        body: webhookEndpointUpdateRequest,
        response: { 200: envelope(webhookEndpoint), ...guarded },
      },
    },
    async (req) => ok(await service.update(requireProject(req), req.params.endpointId, req.body)),
  );

  app.delete(
    `${BASE}/:endpointId`,
    {
      config: {
        audit: { action: 'webhook.changed', targetType: 'webhook', targetParam: 'endpointId', verb: '删除' },
      },
      schema: {
        tags,
        security,
        summary: '删除 Webhook 接收地址（连同其投递日志）',
        params: endpointParams,
        response: { 200: envelope(z.object({ deleted: z.literal(true) })), ...guarded },
      },
    },
    async (req) => {
      await service.remove(requireProject(req), req.params.endpointId);
      return ok({ deleted: true as const });
    },
  );

  app.get(
    `${BASE}/:endpointId/secret`,
    {
      schema: {
        tags,
        security,
        summary: '查看签名密钥（仅所有者与管理员）',
        params: endpointParams,
        response: { 200: envelope(webhookSecret), ...guarded },
      },
    },
    async (req) => ok(await service.revealSecret(requireProject(req), req.params.endpointId)),
  );

  app.post(
    `${BASE}/:endpointId/secret/roll`,
    {
      config: {
        audit: {
          action: 'webhook.changed',
          targetType: 'webhook',
          targetParam: 'endpointId',
          verb: '轮换签名密钥',
        },
      },
      schema: {
        tags,
        security,
        summary: '轮换签名密钥（宽限期内新旧密钥同时签名）',
        params: endpointParams,
        body: webhookSecretRollRequest,
        response: { 200: envelope(webhookSecret), ...guarded },
      },
    },
    async (req) =>
      ok(await service.rollSecret(requireProject(req), req.params.endpointId, req.body.graceHours)),
  );

  app.post(
    `${BASE}/:endpointId/test`,
    {
      schema: {
        tags,
        security,
        summary: '发送测试事件（事件目录中的示例，经正常投递队列发送并签名）',
        description: '等待首次投递完成（至多约 15 秒）后返回投递记录；之后按正常重试计划继续。',
        params: endpointParams,
        body: webhookTestRequest,
        response: { 200: envelope(webhookDelivery), ...guarded },
      },
    },
    async (req) => {
      const project = requireProject(req);
      await service.testTarget(project, req.params.endpointId);
      const type = req.body.eventType;
      const id = await outbox.enqueueTest(
        project.id,
        req.params.endpointId,
        type,
        WEBHOOK_EVENT_SAMPLES[type],
      );
      if (!id) throw deliveryNotFound();
      return ok(await service.awaitFirstAttempt(project.id, id, WEBHOOK_TIMEOUT_MS + 2000));
    },
  );

  app.get(
    `${BASE}/:endpointId/deliveries`,
    {
      schema: {
        tags,
        security,
        summary: '投递日志（30 天；按状态、事件类型筛选）',
        params: endpointParams,
        querystring: webhookDeliveryQuery,
        response: { 200: envelope(webhookDeliveryList), ...guarded },
      },
    },
    async (req) => ok(await service.deliveries(requireProject(req).id, req.params.endpointId, req.query)),
  );

  app.get(
    `${BASE}/:endpointId/deliveries/:deliveryId`,
    {
      schema: {
        tags,
        security,
        summary: '投递详情（请求体与每次尝试的请求头、状态码、耗时、应答）',
        params: deliveryParams,
        response: { 200: envelope(webhookDeliveryDetail), ...guarded },
      },
    },
    async (req) =>
      ok(await service.delivery(requireProject(req).id, req.params.endpointId, req.params.deliveryId)),
  );

  app.post(
    `${BASE}/:endpointId/deliveries/:deliveryId/replay`,
    {
      schema: {
        tags,
        security,
        summary: '重新发送（立即发送，重新签名，webhook-id 不变）',
        description:
          '等本次发送完成后返回投递详情。不改变自动重试计划；若本次成功，待投递或已失败的记录标记为成功。',
        params: deliveryParams,
        response: { 200: envelope(webhookDeliveryDetail), ...guarded },
      },
    },
    async (req) => {
      const project = requireProject(req);
      const { endpointId, deliveryId } = req.params;
      service.assertCanManage(project);
      await service.assertDelivery(project.id, endpointId, deliveryId);
      if (!(await dispatcher.replay(project.id, deliveryId))) throw deliveryNotFound();
      return ok(await service.delivery(project.id, endpointId, deliveryId));
    },
  );
};
