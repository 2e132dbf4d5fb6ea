import {
  envelope,
  errorEnvelope,
  OPENDOCK_TAGS,
  openCallCreated,
  openCallCreateRequest,
  openCallDetail,
  openCallIdParams,
  openCallList,
  openCallListQuery,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AppError } from '../../lib/errors';
import { ok } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { OPENDOCK_PREFIX, requireApiKey } from '../../plugins/api-key-auth';
import type { ModuleOptions } from '../module-options';
import {
  CONCURRENCY_RETRY_AFTER_SECONDS,
  checkApiCall,
  getOpenCall,
  listCallsByCursor,
} from './open-calls.service';
import { openFailures, openSecurity, scope } from './opendock-schema';

/** Single calls placed by customers' systems, and the call records they read back. */
export const openCallsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env, runtime }) => {
  const secret = loadAppSecret(env);
  const tags = [OPENDOCK_TAGS.calls];
  const security = openSecurity;

  app.post(
    `${OPENDOCK_PREFIX}/calls`,
    {
      config: scope('calls', 'write'),
      schema: {
        tags,
        security,
        summary: '发起单通外呼',
        description:
          '由智能小助手的已发布版本呼叫一个号码，与呼出任务中的一通电话相同：经外显号码所在的线路呼出' +
          '（SIP 中继或模拟线路），接通后小助手与客户对话，结束后生成分析与录音。' +
          '接口在拨号开始时立即返回通话 ID，不等待接通；通话的进展与结果可查询通话详情，或订阅 Webhook 事件' +
          '（call.ringing、call.answered、call.ended、call.analyzed、call.recording_ready）。' +
          '号码在免打扰名单中返回 409；项目余额不足返回 403；项目的呼出并发已满返回 429（按 Retry-After 重试）。',
        body: openCallCreateRequest,
        response: { 200: envelope(openCallCreated), ...openFailures, 503: errorEnvelope },
      },
    },
    async (req, reply) => {
      const projectId = requireApiKey(req).projectId;
      try {
        const request = await checkApiCall(db, env, projectId, req.body);
        return ok(await runtime.placeApiCall(projectId, request));
      } catch (err) {
        if (err instanceof AppError && err.statusCode === 429) {
          reply.header('retry-after', String(CONCURRENCY_RETRY_AFTER_SECONDS));
        }
        throw err;
      }
    },
  );

  app.get(
    `${OPENDOCK_PREFIX}/calls`,
    {
      config: scope('records', 'read'),
      schema: {
        tags,
        security,
        summary: '通话记录列表（游标分页）',
        description:
          '与控制台通话记录相同的筛选条件（时间范围、方向、结束原因、意向等级、任务、小助手、号码、通话时长、标签、状态），' +
          '按开始时间排序（order 默认 desc，从新到旧）。翻页时把应答中的 nextCursor 作为下一次请求的 cursor，' +
          '其他筛选条件保持不变；nextCursor 为 null 表示已到最后一页。翻页期间新产生的通话不会使记录重复或遗漏。',
        querystring: openCallListQuery,
        response: { 200: envelope(openCallList), ...openFailures },
      },
    },
    async (req) => ok(await listCallsByCursor(db, requireApiKey(req).projectId, req.query)),
  );

  app.get(
    `${OPENDOCK_PREFIX}/calls/:callId`,
    {
      config: scope('records', 'read'),
      schema: {
        tags,
        security,
        summary: '通话详情：逐轮对话、分析结果与录音地址',
        description:
          '通话信息、逐轮对话（turns）、分析结果（意向等级 intentGrade、判定理由 gradeReason、摘要 summary、' +
          '提取的字段 fields），以及录音生成后（recording 为 ready）的签名下载地址 recordingUrl（10 分钟内有效，' +
          '过期后重新查询即可获得新地址）。',
        params: openCallIdParams,
        response: { 200: envelope(openCallDetail), ...openFailures },
      },
    },
    async (req) => {
      const projectId = requireApiKey(req).projectId;
      const origin = `${req.protocol}://${req.host}`;
      return ok(await getOpenCall(db, secret, projectId, req.params.callId, origin));
    },
  );
};
