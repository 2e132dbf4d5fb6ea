import {
  callDetail,
  callExportQuery,
  callFilters,
  callGradeRequest,
  callIdParams,
  callList,
  callListQuery,
  callNeighbors,
  callTagsRequest,
  envelope,
  errorEnvelope,
  projectIdParams,
  testCallRequest,
  testCallStarted,
  testInboundCallRequest,
} from '@callpilot/contracts';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError, notFound } from '../../lib/errors';
import { ok, sendDownload } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { CSV_CONTENT_TYPE, XLSX_CONTENT_TYPE } from '../../lib/spreadsheet';
import { streamEvents } from '../../lib/sse';
import { requireUser } from '../../plugins/auth';
import { requireProject } from '../../plugins/project-access';
import { auditActor, recordAudit } from '../audit/audit.service';
import type { ModuleOptions } from '../module-options';
import { exportCallsCsv, exportCallsXlsx } from './calls.export';
import {
  findCall,
  callNeighbors as findNeighbors,
  getCallDetail,
  listCalls,
  listTags,
} from './calls.service';
import { recordingUrl, verifyRecordingSignature } from './recording-url';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const BASE = '/api/project/:projectId/calls';

/** One `bytes=start-end` range (all a media element asks for); null when absent or not that form. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'invalid' | null {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, from, to] = match;
  if (from === '' && to === '') return 'invalid';
  let start: number;
  let end: number;
  if (from === '') {
    // A suffix range: the last N bytes.
    start = Math.max(0, size - Number(to));
    end = size - 1;
  } else {
    start = Number(from);
    end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  }
  if (start >= size || start > end) return 'invalid';
  return { start, end };
}

/** Call records, their recordings and live events, and the simulated calls of the console. */
export const callsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env, runtime }) => {
  const secret = loadAppSecret(env);

  const tags = ['通话记录'];
  const security = [{ bearerAuth: [] }];

  app.get(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '通话记录列表（服务端分页、筛选与排序）',
        params: projectIdParams,
        querystring: callListQuery,
        response: { 200: envelope(callList), ...guarded },
      },
    },
    async (req) => ok(await listCalls(db, requireProject(req).id, req.query)),
  );

  app.get(
    `${BASE}/tags`,
    {
      schema: {
        tags,
        security,
        summary: '项目内用过的通话标签',
        params: projectIdParams,
        response: { 200: envelope(z.array(z.string())), ...guarded },
      },
    },
    async (req) => ok(await listTags(db, requireProject(req).id)),
  );

  app.get(
    `${BASE}/export`,
    {
      schema: {
        tags,
        security,
        summary: '按当前筛选导出通话记录（CSV / XLSX，流式生成）',
        description: '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。',
        params: projectIdParams,
        querystring: callExportQuery,
      },
    },
    async (req, reply) => {
      const projectId = requireProject(req).id;
      const { format, ...filters } = req.query;
      const stamp = new Date(Date.now() + 8 * 3600_000).toISOString().slice(0, 16).replace(/[-:T]/g, '');
      const fileName = `通话记录-${stamp}.${format}`;
      // Recorded before the file streams: a copy of the records may leave even if the stream breaks.
      await recordAudit(db, {
        ...auditActor(req),
        action: 'calls.exported',
        targetType: 'calls',
        summary: `导出通话记录（${format.toUpperCase()}）`,
        detail: { format, filters },
      });
      const body =
        format === 'xlsx' ? exportCallsXlsx(db, projectId, filters) : exportCallsCsv(db, projectId, filters);
      body.on('error', (err) => req.log.error({ err }, 'call export failed'));
      const contentType = format === 'xlsx' ? XLSX_CONTENT_TYPE : CSV_CONTENT_TYPE;
      return sendDownload(reply, { fileName, contentType, body }, `calls.${format}`);
    },
  );

  app.get(
    `${BASE}/events`,
    {
      schema: {
        tags,
        security,
        summary: '通话实时事件（SSE：started / answered / turn / ended / updated）',
        description:
          '每个事件一行 `data: <json>`；每 15 秒一行 `: ping` 保持连接。可用 callId 只跟随一通电话。',
        params: projectIdParams,
        querystring: z.object({ callId: z.string().max(64).optional() }),
        response: guarded,
      },
    },
    async (req, reply) => {
      const projectId = requireProject(req).id;
      streamEvents(
        reply,
        (send) => runtime.hub.subscribe(projectId, send, req.query.callId),
        (end) => runtime.onStop(end),
      );
    },
  );

  app.post(
    `${BASE}/test`,
    {
      schema: {
        tags,
        security,
        summary: '模拟通话：在模拟运营商上以所选客户类型呼叫小助手，实时事件见 /events',
        params: projectIdParams,
        body: testCallRequest,
        response: { 200: envelope(testCallStarted), ...guarded },
      },
    },
    async (req) => ok(await runtime.startTestCall(requireProject(req).id, req.body)),
  );

  app.post(
    `${BASE}/test-inbound`,
    {
      schema: {
        tags,
        security,
        summary: '模拟来电：模拟客户拨打项目号码，按号码的呼入绑定与项目的呼入并发接听，实时事件见 /events',
        params: projectIdParams,
        body: testInboundCallRequest,
        response: { 200: envelope(testCallStarted), ...guarded, 503: errorEnvelope },
      },
    },
    async (req) => ok(await runtime.startInboundTestCall(requireProject(req).id, req.body)),
  );

  const one = `${BASE}/:callId`;
  app.get(
    one,
    {
      schema: {
        tags,
        security,
        summary: '通话详情：通话信息、逐轮对话、分析与复核',
        params: callIdParams,
        response: { 200: envelope(callDetail), ...guarded },
      },
    },
    async (req) => ok(await getCallDetail(db, requireProject(req).id, req.params.callId)),
  );

  app.get(
    `${one}/neighbors`,
    {
      schema: {
        tags,
        security,
        summary: '同一筛选与排序下的上一条、下一条',
        params: callIdParams,
        querystring: callFilters,
        response: { 200: envelope(callNeighbors), ...guarded },
      },
    },
    async (req) => ok(await findNeighbors(db, requireProject(req).id, req.params.callId, req.query)),
  );

  app.post(
    `${one}/hangup`,
    {
      schema: {
        tags,
        security,
        summary: '挂断进行中的模拟通话或模拟来电（模拟客户挂机；仍在振铃时取消呼叫）',
        params: callIdParams,
        response: { 200: envelope(z.object({ hungUp: z.boolean() })), ...guarded, 409: errorEnvelope },
      },
    },
    async (req) => {
      const row = await findCall(db, requireProject(req).id, req.params.callId);
      if (row.status === 'ended') throw new AppError(409, 'CONFLICT', '通话已结束');
      if (!row.persona) throw new AppError(409, 'CONFLICT', '只能挂断模拟通话或模拟来电');
      if (!(await runtime.hangUp(row.id))) throw new AppError(409, 'CONFLICT', '通话已不在进行中');
      return ok({ hungUp: true });
    },
  );

  app.put(
    `${one}/grade`,
    {
      schema: {
        tags,
        security,
        summary: '人工复核意向等级（null 清除，恢复机器判定）',
        params: callIdParams,
        body: callGradeRequest,
        response: { 200: envelope(callDetail), ...guarded },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      return ok(
        await runtime.calls.setHumanGrade(projectId, req.params.callId, req.body.grade, requireUser(req).id),
      );
    },
  );

  app.put(
    `${one}/tags`,
    {
      schema: {
        tags,
        security,
        summary: '设置通话标签',
        params: callIdParams,
        body: callTagsRequest,
        response: { 200: envelope(callDetail), ...guarded },
      },
    },
    async (req) => {
      return ok(await runtime.calls.setTags(requireProject(req).id, req.params.callId, req.body.tags));
    },
  );

  const sendRecording = async (reply: FastifyReply, key: string, range: string | undefined) => {
    const size = await runtime.recordings.size(key);
    if (size === null) throw notFound('录音不存在');
    reply
      .header('accept-ranges', 'bytes')
      .header('content-type', 'audio/wav')
      .header('cache-control', 'private, max-age=600');
    const wanted = parseRange(range, size);
    if (wanted === 'invalid') {
      throw new AppError(416, 'BAD_REQUEST', '请求的录音范围无效');
    }
    if (!wanted) return reply.header('content-length', size).send(runtime.recordings.stream(key));
    return reply
      .code(206)
      .header('content-range', `bytes ${wanted.start}-${wanted.end}/${size}`)
      .header('content-length', wanted.end - wanted.start + 1)
      .send(runtime.recordings.stream(key, wanted));
  };

  const readyRecording = async (projectId: string, callId: string) => {
    const row = await findCall(db, projectId, callId);
    if (row.recording !== 'ready' || !row.recordingKey) {
      throw notFound(row.recording === 'pending' ? '录音生成中，请稍后再试' : '该通话没有录音');
    }
    return row.recordingKey;
  };

  app.get(
    `${one}/recording`,
    {
      schema: {
        tags,
        security,
        summary: '下载录音（audio/wav，支持 Range）',
        params: callIdParams,
        response: guarded,
      },
    },
    async (req, reply) => {
      const key = await readyRecording(requireProject(req).id, req.params.callId);
      return sendRecording(reply, key, req.headers.range);
    },
  );

  app.get(
    `${one}/recording-url`,
    {
      schema: {
        tags,
        security,
        summary: '录音的临时播放地址（10 分钟内有效，供浏览器音频元素使用）',
        params: callIdParams,
        response: { 200: envelope(z.object({ url: z.string(), expiresAt: z.iso.datetime() })), ...guarded },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      await readyRecording(projectId, req.params.callId);
      return ok(recordingUrl(secret, projectId, req.params.callId));
    },
  );

  // Outside /api/project/: the signature, issued to a member, is the authorisation.
  app.get(
    '/api/recordings/:projectId/:file',
    {
      schema: {
        tags,
        summary: '按签名地址播放录音（由 recording-url 签发）',
        params: z.object({ projectId: z.string().max(64), file: z.string().max(80) }),
        querystring: z.object({ expires: z.coerce.number(), signature: z.string().max(100) }),
        response: { 403: errorEnvelope, 404: errorEnvelope },
      },
    },
    async (req, reply) => {
      const callId = req.params.file.replace(/\.wav$/, '');
      if (
        !verifyRecordingSignature(
          secret,
          req.params.projectId,
          callId,
          req.query.expires,
          req.query.signature,
        )
      ) {
        throw new AppError(403, 'FORBIDDEN', '录音地址无效或已过期');
      }
      const key = await readyRecording(req.params.projectId, callId);
      return sendRecording(reply, key, req.headers.range);
    },
  );
};
