import {
  envelope,
  errorEnvelope,
  FLOW_AUDIO_RULES,
  FLOW_IMPORT_MAX_BYTES,
  type FlowTestCallRequest,
  flowAudio,
  flowAudioIdParams,
  flowCreateRequest,
  flowDetail,
  flowDraftRequest,
  flowDraftSaved,
  flowExport,
  flowGraph,
  flowIdParams,
  flowListQuery,
  flowNodeStats,
  flowOption,
  flowPublishRequest,
  flowStatsQuery,
  flowSummary,
  flowTestCallRequest,
  flowVersionParams,
  flowVersionSummary,
  paged,
  projectIdParams,
  testCallStarted,
} from '@callpilot/contracts';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../lib/errors';
import { ok } from '../../lib/reply';
import { textProblem, textProblemRule } from '../../lib/safe-text';
import { requireUser } from '../../plugins/auth';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { deleteFlowAudio, listFlowAudio, readFlowAudio, uploadFlowAudio } from './flow-audio.service';
import {
  copyFlow,
  createFlow,
  deleteFlow,
  exportFlow,
  flowOptions,
  flowStats,
  getFlow,
  getFlowVersion,
  importFilePlace,
  importFlow,
  listFlows,
  listFlowVersions,
  publishFlow,
  rollbackFlow,
  saveDraft,
  statsRange,
} from './flows.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
/** A 500-node graph with long prompts outgrows the default 1 MB body; so may an import file. */
const GRAPH_BODY_LIMIT = FLOW_IMPORT_MAX_BYTES;

/** Started by the call runtime once 模拟来电 of a draft exists there (runtime/runtime.ts). */
type FlowTestCallStarter = {
  startFlowTestCall?: (
    projectId: string,
    flowId: string,
    request: FlowTestCallRequest,
  ) => Promise<{ callId: string }>;
};

const sendWav = (reply: FastifyReply, wav: Buffer) =>
  reply.header('content-type', 'audio/wav').header('cache-control', 'no-store').send(wav);

/** The first problem of an import file, as a person reads it: where in the file, and what. */
function importProblem(req: FastifyRequest): string | null {
  const failure = req.validationError as
    | (Error & { validation?: { instancePath?: string; message?: string }[] })
    | undefined;
  if (!failure) return null;
  const first = failure.validation?.[0];
  const field = (first?.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
  const message = first?.message ?? '内容无法识别';
  return field ? importFilePlace(field, message) : `导入文件格式不正确：${message}`;
}

/** 通话流程: flows, their versions, import/export, statistics, uploaded prompts and 模拟来电. */
export const flowsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, runtime }) => {
  const tags = ['通话流程'];
  const security = [{ bearerAuth: [] }];
  const base = '/api/project/:projectId/flows';
  const one = `${base}/:flowId`;

  app.get(
    base,
    {
      schema: {
        tags,
        security,
        summary: '流程列表（分页，按名称搜索；含状态、接听号码、近 7 天来电数、节点数）',
        params: projectIdParams,
        querystring: flowListQuery,
        response: { 200: envelope(paged(flowSummary)), ...guarded },
      },
    },
    async (req) => ok(await listFlows(db, requireProject(req).id, req.query)),
  );

  app.get(
    `${base}/options`,
    {
      schema: {
        tags,
        security,
        summary: '全部流程的名称与已发布版本（子流程与号码绑定的选择框）',
        params: projectIdParams,
        response: { 200: envelope(z.array(flowOption)), ...guarded },
      },
    },
    async (req) => ok(await flowOptions(db, requireProject(req).id)),
  );

  app.post(
    base,
    {
      schema: {
        tags,
        security,
        summary: '新建流程（草稿只有一个「开始」节点）',
        params: projectIdParams,
        body: flowCreateRequest,
        response: { 200: envelope(flowDetail), ...guarded },
      },
    },
    async (req) => ok(await createFlow(db, requireProject(req).id, requireUser(req).id, req.body)),
  );

  app.post(
    `${base}/import`,
    {
      // A body without a length (chunked) past the limit is refused by the framework (413).
      bodyLimit: GRAPH_BODY_LIMIT,
      // Refused by size before the body is read: the message says the file is too large.
      onRequest: async (req) => {
        if (Number(req.headers['content-length'] ?? 0) > FLOW_IMPORT_MAX_BYTES)
          throw new AppError(400, 'VALIDATION_FAILED', '导入文件不能超过 2 MB');
      },
      // The route answers a malformed file itself, naming the place in the file (not a request field).
      attachValidation: true,
      schema: {
        tags,
        security,
        summary: '导入流程（导出的 JSON 文件，不超过 2 MB；生成新的草稿流程）',
        params: projectIdParams,
        body: flowExport,
        response: { 200: envelope(flowDetail), ...guarded, 413: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      const problem = importProblem(req);
      if (problem) throw new AppError(400, 'VALIDATION_FAILED', problem);
      return ok(await importFlow(db, project.id, requireUser(req).id, req.body));
    },
  );

  app.get(
    one,
    {
      schema: {
        tags,
        security,
        summary: '流程详情（草稿、已发布版本的流程图与草稿的校验结果）',
        params: flowIdParams,
        response: { 200: envelope(flowDetail), ...guarded },
      },
    },
    async (req) => ok(await getFlow(db, requireProject(req).id, req.params.flowId)),
  );

  app.put(
    `${one}/draft`,
    {
      bodyLimit: GRAPH_BODY_LIMIT,
      schema: {
        tags,
        security,
        summary: '保存草稿（不影响已发布版本；返回校验结果，错误会阻止发布）',
        params: flowIdParams,
        body: flowDraftRequest,
        response: { 200: envelope(flowDraftSaved), ...guarded, 413: errorEnvelope },
      },
    },
    async (req) => ok(await saveDraft(db, requireProject(req).id, req.params.flowId, req.body)),
  );

  app.post(
    `${one}/publish`,
    {
      config: {
        publishes: true,
        audit: { action: 'flow.published', targetType: 'flow', targetParam: 'flowId', verb: '发布' },
      },
      schema: {
        tags,
        security,
        summary: '发布：把草稿冻结为新版本，之后的来电使用它（有校验错误时拒绝）',
        params: flowIdParams,
        body: flowPublishRequest.nullish(),
        response: { 200: envelope(flowDetail), ...guarded },
      },
    },
    async (req) =>
      ok(
        await publishFlow(
          db,
          requireProject(req).id,
          req.params.flowId,
          requireUser(req).id,
          req.body?.note ?? '',
        ),
      ),
  );

  app.get(
    `${one}/versions`,
    {
      schema: {
        tags,
        security,
        summary: '版本历史（最新在前，live 为正在接听来电的版本）',
        params: flowIdParams,
        response: { 200: envelope(z.array(flowVersionSummary)), ...guarded },
      },
    },
    async (req) => ok(await listFlowVersions(db, requireProject(req).id, req.params.flowId)),
  );

  app.get(
    `${one}/versions/:version`,
    {
      schema: {
        tags,
        security,
        summary: '某个已发布版本的流程图',
        params: flowVersionParams,
        response: { 200: envelope(flowGraph), ...guarded },
      },
    },
    async (req) =>
      ok(await getFlowVersion(db, requireProject(req).id, req.params.flowId, req.params.version)),
  );

  app.post(
    `${one}/versions/:version/rollback`,
    {
      config: {
        publishes: true,
        audit: {
          action: 'flow.rolled_back',
          targetType: 'flow',
          targetParam: 'flowId',
          summary: (req, d) => `${d?.name ?? ''} 回滚到 v${(req.params as { version: number }).version}`,
        },
      },
      schema: {
        tags,
        security,
        summary: '回滚：该版本重新接听来电，草稿恢复为该版本',
        params: flowVersionParams,
        response: { 200: envelope(flowDetail), ...guarded },
      },
    },
    async (req) => ok(await rollbackFlow(db, requireProject(req).id, req.params.flowId, req.params.version)),
  );

  app.post(
    `${one}/copy`,
    {
      schema: {
        tags,
        security,
        summary: '复制流程（副本为未发布的草稿）',
        params: flowIdParams,
        response: { 200: envelope(flowDetail), ...guarded },
      },
    },
    async (req) => ok(await copyFlow(db, requireProject(req).id, req.params.flowId, requireUser(req).id)),
  );

  app.delete(
    one,
    {
      schema: {
        tags,
        security,
        summary: '删除流程（号码正在使用或被其他流程的已发布版本用作子流程时拒绝；通话记录保留）',
        params: flowIdParams,
        response: { 200: envelope(z.null()), ...guarded, 409: errorEnvelope },
      },
    },
    async (req) => {
      await deleteFlow(db, requireProject(req).id, req.params.flowId);
      return ok(null);
    },
  );

  app.get(
    `${one}/export`,
    {
      schema: {
        tags,
        security,
        summary: '导出流程（草稿，JSON 文件内容）',
        params: flowIdParams,
        response: { 200: envelope(flowExport), ...guarded },
      },
    },
    async (req) => ok(await exportFlow(db, requireProject(req).id, req.params.flowId)),
  );

  app.get(
    `${one}/stats`,
    {
      schema: {
        tags,
        security,
        summary:
          '节点统计：时间段 [from, to) 内已发布版本的来电经过各节点的通话数与在该节点挂机的通话数（默认近 7 天，最长 93 天）',
        params: flowIdParams,
        querystring: flowStatsQuery,
        response: { 200: envelope(flowNodeStats), ...guarded },
      },
    },
    async (req) => {
      const project = requireProject(req);
      const range = statsRange(req.query);
      return ok(await flowStats(db, project.id, req.params.flowId, range));
    },
  );

  app.post(
    `${one}/test-call`,
    {
      schema: {
        tags,
        security,
        summary: '模拟来电：在模拟线路上按草稿接听一通来电（记为测试通话），模拟来电者按 script 依次输入',
        params: flowIdParams,
        body: flowTestCallRequest,
        response: { 200: envelope(testCallStarted), ...guarded, 503: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      // The flow is looked up first, so another project's or a deleted flow is a plain 404.
      await getFlow(db, project.id, req.params.flowId);
      const starter = runtime as FlowTestCallStarter;
      if (!starter.startFlowTestCall) throw new AppError(503, 'SERVICE_UNAVAILABLE', '模拟来电暂不可用');
      return ok(await starter.startFlowTestCall(project.id, req.params.flowId, req.body));
    },
  );

  // ---- Uploaded prompts (放音 audio) ----------------------------------------------------------

  const audioBase = `${base}/audio`;
  const audioOne = `${audioBase}/:audioId`;

  app.get(
    audioBase,
    {
      schema: {
        tags,
        security,
        summary: '放音音频列表',
        params: projectIdParams,
        response: { 200: envelope(z.array(flowAudio)), ...guarded },
      },
    },
    async (req) => ok(await listFlowAudio(db, requireProject(req).id)),
  );

  // Multipart is read by the upload only: every other route keeps refusing it (415).
  await app.register(async (uploads) => {
    await uploads.register(fastifyMultipart, {
      limits: { fileSize: FLOW_AUDIO_RULES.maxBytes + 1, files: 1, fields: 5, parts: 6 },
      throwFileSizeLimit: false,
      attachFieldsToBody: false,
    });
    uploads.post(
      audioBase,
      {
        schema: {
          tags,
          security,
          summary: `上传放音音频（multipart/form-data：file 为 WAV，任意采样率与声道，不超过 ${FLOW_AUDIO_RULES.maxBytes / 1024 / 1024} MB、${FLOW_AUDIO_RULES.maxSeconds} 秒；name 可选；存为 8 kHz 单声道）`,
          params: projectIdParams,
          response: { 200: envelope(flowAudio), ...guarded, 413: errorEnvelope },
        },
      },
      async (req) => {
        const project = requireProject(req);
        if (!req.isMultipart())
          throw new AppError(
            400,
            'VALIDATION_FAILED',
            '请以 multipart/form-data 方式上传（字段 file，可选 name）',
          );
        let name: string | undefined;
        let file: { fileName: string; bytes: Buffer; truncated: boolean } | undefined;
        try {
          for await (const part of req.parts()) {
            if (part.type === 'file') {
              const bytes = await part.toBuffer();
              if (part.fieldname === 'file' && !file)
                file = { fileName: part.filename, bytes, truncated: part.file.truncated };
            } else if (part.fieldname === 'name' && typeof part.value === 'string') {
              name = part.value;
            }
          }
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
            throw new AppError(413, 'PAYLOAD_TOO_LARGE', '字段 file：只能上传一个音频文件');
          req.log.info({ err: { code } }, 'malformed multipart body');
          throw new AppError(400, 'VALIDATION_FAILED', '字段 file：上传内容不完整或格式不正确，请重新上传');
        }
        for (const [field, value] of [
          ['name', name ?? ''],
          ['file', file?.fileName ?? ''],
        ] as const) {
          const problem = textProblem(value);
          if (problem)
            throw new AppError(400, 'VALIDATION_FAILED', `字段 ${field}：${textProblemRule[problem]}`);
        }
        return ok(
          await uploadFlowAudio(db, runtime.recordings, project.id, requireUser(req).id, { name, file }),
        );
      },
    );
  });

  app.get(
    audioOne,
    {
      schema: {
        tags,
        security,
        summary: '下载放音音频（audio/wav，8 kHz 单声道）',
        params: flowAudioIdParams,
        response: guarded,
      },
    },
    async (req, reply) => {
      const wav = await readFlowAudio(db, runtime.recordings, requireProject(req).id, req.params.audioId);
      return sendWav(reply, wav);
    },
  );

  app.delete(
    audioOne,
    {
      schema: {
        tags,
        security,
        summary: '删除放音音频（流程的已发布版本正在播放时拒绝）',
        params: flowAudioIdParams,
        response: { 200: envelope(z.null()), ...guarded, 409: errorEnvelope },
      },
    },
    async (req) => {
      await deleteFlowAudio(db, runtime.recordings, requireProject(req).id, req.params.audioId);
      return ok(null);
    },
  );
};
