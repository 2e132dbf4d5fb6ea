import { envelope, OPENDOCK_TAGS, openSmsIdParams, smsMessage, smsSendRequest } from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ok } from '../../lib/reply';
import { OPENDOCK_PREFIX, requireApiKey } from '../../plugins/api-key-auth';
import type { ModuleOptions } from '../module-options';
import { toSmsMessage } from '../sms/sms-message-view';
import { enqueueSms, findSmsMessage } from '../sms/sms-send.service';
import { openFailures, openSecurity, scope } from './opendock-schema';

/** SMS sent by customers' systems: the same queue and rules as the console's 单条发送. */
export const openSmsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, runtime }) => {
  const tags = [OPENDOCK_TAGS.sms];
  const security = openSecurity;
  const BASE = `${OPENDOCK_PREFIX}/sms`;

  app.post(
    BASE,
    {
      config: scope('sms', 'write'),
      schema: {
        tags,
        security,
        summary: '发送短信',
        description:
          '用项目已通过审核的签名与模板给一个中国大陆手机号发送短信，variables 按模板变量名给出取值（每个不超过 35 个字符）。' +
          '接口在短信进入发送队列时返回 201 与短信记录（status 为 queued 待发送）；之后的进展（已提交、运营商已接收、成功或失败）' +
          '用 GET /opendock/v1/sms/{smsId} 查询。号码在免打扰名单中或超过每号码每日上限时仍返回记录，status 为 blocked（未发送）并说明原因；' +
          '推广短信在 08:00–20:00（北京时间）以外提交时 status 为 waiting，到 08:00 发送。签名或模板未通过审核返回 409。',
        body: smsSendRequest,
        response: { 201: envelope(smsMessage), ...openFailures },
      },
    },
    async (req, reply) => {
      const projectId = requireApiKey(req).projectId;
      const sent = await enqueueSms(
        db,
        { projectId, ...req.body, source: 'api' },
        new Date(runtime.clock.now()),
      );
      reply.code(201);
      return ok(sent, 201);
    },
  );

  app.get(
    `${BASE}/:smsId`,
    {
      config: scope('sms', 'read'),
      schema: {
        tags,
        security,
        summary: '短信详情',
        description:
          '一条短信的状态与时间线（timeline：每次状态变化的时间与原因）。不属于本项目的 ID 返回 404。',
        params: openSmsIdParams,
        response: { 200: envelope(smsMessage), ...openFailures },
      },
    },
    async (req) => ok(toSmsMessage(await findSmsMessage(db, requireApiKey(req).projectId, req.params.smsId))),
  );
};
