import { eq } from 'drizzle-orm';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { projects } from '../../db/schema';
import { notFound } from '../../lib/errors';
import { loadAppSecret } from '../../lib/secret-box';
import type { ModuleOptions } from '../module-options';
import { parseAliyunPush } from './providers/aliyun-sms';
import { parseTencentPush } from './providers/tencent';
import type { SmsPushParse } from './providers/types';
import { verifySmsPushToken } from './sms-push';
import { applySmsReceipt, applySmsReply } from './sms-receipts';

const params = z.object({
  provider: z.enum(['aliyun', 'tencent'], { error: '服务商须为 aliyun 或 tencent' }),
  projectId: z.string().max(64),
  token: z.string().max(100),
  kind: z.enum(['receipts', 'replies'], { error: '推送类型须为 receipts 或 replies' }),
});

/**
 * 回执 and 上行 pushed by Aliyun (HTTP 批量推送) and Tencent (回调配置): outside /api/project/, no
 * session; the token in the address (sms-push.ts) is the authorisation, and a wrong one is a 404
 * that changes nothing. The answer is the one the vendor expects, or it pushes the same again.
 */
export const smsPushRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env }) => {
  const secret = loadAppSecret(env);
  // Bodies are read as text whatever their Content-Type and parsed by the vendor's parser, so an
  // unreadable one is answered in the vendor's format (it then pushes again) rather than ours.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (_req, body, done) =>
    done(null, body),
  );

  app.post(
    '/api/sms-push/:provider/:projectId/:token/:kind',
    {
      schema: {
        tags: ['短信管理'],
        summary: '接收云服务商推送的短信回执与上行回复（地址见短信服务商设置）',
        // Answered in the vendor's own format (or the envelope for a wrong address): no response schema.
        params,
      },
    },
    async (req, reply) => {
      const { provider, projectId, token, kind } = req.params;
      if (!verifySmsPushToken(secret, provider, projectId, token)) throw notFound('推送地址不存在');
      const [project] = await db
        .select({ id: projects.id })
        .from(projects)
        .where(eq(projects.id, projectId))
        .limit(1);
      if (!project) throw notFound('推送地址不存在');
      const parsed: SmsPushParse =
        provider === 'aliyun'
          ? parseAliyunPush(kind === 'receipts' ? 'SmsReport' : 'SmsUp', req.body)
          : parseTencentPush(kind === 'receipts' ? 'status' : 'reply', req.body);
      for (const receipt of parsed.receipts) await applySmsReceipt(db, projectId, provider, receipt);
      for (const inbound of parsed.replies) await applySmsReply(db, projectId, provider, inbound);
      if (parsed.receipts.length || parsed.replies.length)
        req.log.info(
          { provider, projectId, receipts: parsed.receipts.length, replies: parsed.replies.length },
          'sms push applied',
        );
      return reply.code(parsed.answer.status).send(parsed.answer.body);
    },
  );
};
