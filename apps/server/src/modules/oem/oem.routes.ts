import { consoleConfig, envelope, errorEnvelope, oemInfo } from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { publicRateLimit } from '../../plugins/rate-limits';
import type { ModuleOptions } from '../module-options';
import { getOemInfo } from './oem.service';

const hostParams = z.object({
  host: z
    .string({ error: '请输入域名' })
    .min(1, { error: '请输入域名' })
    .max(253, { error: '域名不能超过 253 个字符' }),
});

export const oemRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env }) => {
  app.get(
    '/api/console/config',
    {
      config: publicRateLimit('oemLookup'),
      schema: {
        tags: ['品牌'],
        summary: '控制台所需的服务器配置（无需登录），如销售电话',
        response: { 200: envelope(consoleConfig), 429: errorEnvelope },
      },
    },
    async () => ok({ salesPhone: env.SALES_PHONE }),
  );

  app.get(
    '/api/oem/:host',
    {
      config: publicRateLimit('oemLookup'),
      schema: {
        tags: ['品牌'],
        summary: '按域名查询贴牌信息（无需登录）',
        params: hostParams,
        response: { 200: envelope(oemInfo), 400: errorEnvelope, 429: errorEnvelope },
      },
    },
    async (req) => ok(await getOemInfo(db, req.params.host)),
  );
};
