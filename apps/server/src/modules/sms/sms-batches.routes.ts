import {
  envelope,
  errorEnvelope,
  projectIdParams,
  smsBatch,
  smsBatchCommitRequest,
  smsBatchList,
  smsBatchListQuery,
  smsBatchPreview,
  smsBatchPreviewRequest,
  smsBatchTemplateQuery,
  smsBatchUploadQuery,
} from '@callpilot/contracts';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok, sendDownload } from '../../lib/reply';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { IMPORT_MAX_BYTES } from '../tasks/import-parse';
import { receiveContactFile } from '../tasks/import-upload';
import {
  batchRejectsCsv,
  batchTemplateCsv,
  commitBatchUpload,
  createBatchUpload,
  listBatches,
  previewBatchUpload,
} from './sms-batches.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const writes = { ...guarded, 409: errorEnvelope, 413: errorEnvelope };
const BASE = '/api/project/:projectId/sms/batches';
const uploadParams = projectIdParams.extend({ uploadId: z.string().min(1).max(64) });
const batchParams = projectIdParams.extend({ batchId: z.string().min(1).max(64) });

/** 批量发送: upload a list, map its columns, preview, commit; the list of batches and their rejects. */
export const smsBatchesRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env, runtime }) => {
  const tags = ['短信管理'];
  const security = [{ bearerAuth: [] }];
  const context = () => ({ db, dataDir: env.dataDir, now: new Date(runtime.clock.now()) });

  // Registered inside this module only, so every other route keeps refusing multipart bodies.
  await app.register(fastifyMultipart, {
    limits: { fileSize: IMPORT_MAX_BYTES + 1, files: 1, fields: 10 },
    throwFileSizeLimit: false,
  });

  app.post(
    `${BASE}/uploads`,
    {
      schema: {
        tags,
        security,
        summary:
          '上传批量发送名单（multipart/form-data，字段 file：.csv 或 .xlsx，≤ 20 MB，≤ 100,000 行；查询参数 signatureId、templateId）',
        params: projectIdParams,
        querystring: smsBatchUploadQuery,
        response: { 200: envelope(smsBatchPreview), ...writes },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const { fileName, sheet } = await receiveContactFile(req);
      return ok(await createBatchUpload(context(), projectId, req.query, fileName, sheet));
    },
  );

  app.post(
    `${BASE}/uploads/:uploadId/preview`,
    {
      schema: {
        tags,
        security,
        summary: '按新的列映射重新统计',
        params: uploadParams,
        body: smsBatchPreviewRequest,
        response: { 200: envelope(smsBatchPreview), ...writes },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      return ok(await previewBatchUpload(context(), projectId, req.params.uploadId, req.body.mapping));
    },
  );

  app.post(
    `${BASE}/uploads/:uploadId/commit`,
    {
      schema: {
        tags,
        security,
        summary: '确认发送：通过的行进入发送队列（推广短信在 8:00–20:00 以外等待），未通过的行可下载',
        params: uploadParams,
        body: smsBatchCommitRequest,
        response: { 201: envelope(smsBatch), ...writes },
      },
    },
    async (req, reply) => {
      const projectId = requireProject(req).id;
      const batch = await commitBatchUpload(
        context(),
        projectId,
        req.params.uploadId,
        req.body.mapping,
        req.user?.id ?? null,
      );
      // The worker polls anyway; waking it starts the first sends now rather than at its next poll.
      runtime.sms.wake();
      return reply.code(201).send(ok(batch, 201));
    },
  );

  app.get(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '批量发送记录（含发送进度）',
        params: projectIdParams,
        querystring: smsBatchListQuery,
        response: { 200: envelope(smsBatchList), ...guarded },
      },
    },
    async (req) => ok(await listBatches(db, requireProject(req).id, req.query)),
  );

  app.get(
    `${BASE}/template`,
    {
      schema: {
        tags,
        security,
        summary: '下载批量发送模板（CSV：手机号与模板变量）',
        params: projectIdParams,
        querystring: smsBatchTemplateQuery,
        description: '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。',
      },
    },
    async (req, reply) => {
      const file = await batchTemplateCsv(db, requireProject(req).id, req.query.templateId);
      return sendDownload(reply, file, 'sms-batch-template.csv');
    },
  );

  app.get(
    `${BASE}/:batchId/rejects`,
    {
      schema: {
        tags,
        security,
        summary: '下载未通过的行（CSV：行号、手机号、原因）',
        params: batchParams,
        description: '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。',
      },
    },
    async (req, reply) => {
      const file = await batchRejectsCsv(db, requireProject(req).id, req.params.batchId);
      return sendDownload(reply, file, 'sms-batch-rejects.csv');
    },
  );
};
