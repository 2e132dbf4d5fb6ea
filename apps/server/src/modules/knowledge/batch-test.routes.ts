import {
  envelope,
  errorEnvelope,
  KNOWLEDGE_BATCH_MAX_QUESTIONS,
  knowledgeBaseIdParams,
  knowledgeBatchCompareQuery,
  knowledgeBatchComparison,
  knowledgeBatchItemList,
  knowledgeBatchItemListQuery,
  knowledgeBatchTest,
  knowledgeBatchTestList,
  knowledgeBatchTestParams,
  pageQuery,
} from '@callpilot/contracts';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError, badRequest } from '../../lib/errors';
import { ok, sendDownload } from '../../lib/reply';
import { textProblem, textProblemRule } from '../../lib/safe-text';
import { requireUser } from '../../plugins/auth';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import {
  BATCH_MAX_FILE_BYTES,
  batchTemplateCsv,
  compareBatchTests,
  createBatchTest,
  deleteBatchTest,
  getBatchTest,
  listBatchItems,
  listBatchTests,
  parseBatchFile,
  skippedRowsCsv,
} from './batch-test.service';
import { getKnowledgeBase } from './knowledge.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const BASE = '/api/project/:projectId/knowledge-bases/:knowledgeBaseId/batch-tests';

/** The upload's form fields, as text (multipart carries no numbers). */
const uploadFields = z.object({
  scoreThreshold: z.coerce
    .number({ error: '字段 scoreThreshold：置信度阈值须为数字' })
    .min(0, { error: '字段 scoreThreshold：置信度阈值不能低于 0' })
    .max(1, { error: '字段 scoreThreshold：置信度阈值不能超过 1' })
    .default(0.3),
  topK: z.coerce
    .number({ error: '字段 topK：召回条数须为数字' })
    .int({ error: '字段 topK：召回条数须为整数' })
    .min(1, { error: '字段 topK：召回条数至少为 1' })
    .max(20, { error: '字段 topK：召回条数不能超过 20' })
    .default(5),
  llmProviderId: z.string().max(64, { error: '字段 llmProviderId：模型配置 ID 不正确' }).optional(),
});

async function receiveBatchUpload(req: FastifyRequest) {
  if (!req.isMultipart())
    throw badRequest('请以 multipart/form-data 方式上传（字段 file，可选 scoreThreshold、topK）');
  const fields: Record<string, string> = {};
  let file: { fileName: string; bytes: Buffer; truncated: boolean } | undefined;
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        const bytes = await part.toBuffer();
        if (part.fieldname === 'file' && !file)
          file = { fileName: part.filename, bytes, truncated: part.file.truncated };
      } else if (typeof part.value === 'string') {
        fields[part.fieldname] = part.value;
      }
    }
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
      throw new AppError(413, 'PAYLOAD_TOO_LARGE', '字段 file：一次只能上传一个文件');
    req.log.info({ err: { code } }, 'malformed multipart body');
    throw badRequest('字段 file：上传内容不完整或格式不正确，请重新选择文件上传');
  }
  if (!file) throw badRequest('字段 file：请选择要上传的问题文件（.csv 或 .xlsx）');
  const problem = textProblem(file.fileName);
  if (problem) throw badRequest(`字段 file：文件名${textProblemRule[problem]}`);
  const parsed = uploadFields.safeParse({
    scoreThreshold: fields.scoreThreshold?.trim() || undefined,
    topK: fields.topK?.trim() || undefined,
    llmProviderId: fields.llmProviderId?.trim() || undefined,
  });
  if (!parsed.success) throw badRequest(parsed.error.issues[0]!.message);
  return { file, ...parsed.data };
}

export const batchTestRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, runtime }) => {
  const tags = ['知识库'];
  const security = [{ bearerAuth: [] }];

  // Multipart is read by the upload only: every other route keeps refusing it.
  await app.register(async (plugin) => {
    const uploads = plugin.withTypeProvider<ZodTypeProvider>();
    await uploads.register(fastifyMultipart, {
      limits: { fileSize: BATCH_MAX_FILE_BYTES + 1, files: 1, fields: 5, parts: 6 },
      throwFileSizeLimit: false,
    });
    uploads.post(
      BASE,
      {
        schema: {
          tags,
          security,
          summary: '上传问题列表，开始批量测试',
          description:
            `multipart/form-data：file 为 .csv 或 .xlsx，表头含“问题”列与“期望答案”列（也认“答案”“标准答案”“期望回答”），` +
            `期望答案留空表示该问题不应回答；最多 ${KNOWLEDGE_BATCH_MAX_QUESTIONS} 个问题，问题为空的行跳过并可下载。` +
            '可选字段 scoreThreshold（置信度阈值，默认 0.3）、topK（召回条数，默认 5）、llmProviderId（模型配置）。',
          params: knowledgeBaseIdParams,
          response: { 200: envelope(knowledgeBatchTest), ...guarded, 413: errorEnvelope },
        },
      },
      async (req) => {
        const projectId = requireProject(req).id;
        const { knowledgeBaseId } = req.params;
        await getKnowledgeBase(db, projectId, knowledgeBaseId);
        const upload = await receiveBatchUpload(req);
        const sheet = await parseBatchFile(upload.file.fileName, upload.file.bytes, upload.file.truncated);
        const test = await createBatchTest(db, projectId, knowledgeBaseId, {
          fileName: upload.file.fileName,
          sheet,
          threshold: upload.scoreThreshold,
          topK: upload.topK,
          llmProviderId: upload.llmProviderId,
          createdBy: requireUser(req).id,
        });
        runtime.wakeBatchTests();
        return ok(test);
      },
    );
  });

  app.get(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '批量测试记录（分页，最新在前）',
        params: knowledgeBaseIdParams,
        querystring: pageQuery,
        response: { 200: envelope(knowledgeBatchTestList), ...guarded },
      },
    },
    async (req) =>
      ok(await listBatchTests(db, requireProject(req).id, req.params.knowledgeBaseId, req.query)),
  );

  app.get(
    `${BASE}/template.csv`,
    {
      schema: {
        tags,
        security,
        summary: '下载批量测试模板（CSV：问题、期望答案）',
        params: knowledgeBaseIdParams,
      },
    },
    async (req, reply) => {
      await getKnowledgeBase(db, requireProject(req).id, req.params.knowledgeBaseId);
      return sendDownload(reply, batchTemplateCsv(), 'batch-test-template.csv');
    },
  );

  app.get(
    `${BASE}/:testId`,
    {
      schema: {
        tags,
        security,
        summary: '批量测试详情（进度与指标）',
        params: knowledgeBatchTestParams,
        response: { 200: envelope(knowledgeBatchTest), ...guarded },
      },
    },
    async (req) => {
      const { knowledgeBaseId, testId } = req.params;
      return ok(await getBatchTest(db, requireProject(req).id, knowledgeBaseId, testId));
    },
  );

  app.get(
    `${BASE}/:testId/items`,
    {
      schema: {
        tags,
        security,
        summary: '批量测试逐题结果（分页，可按结果筛选）',
        params: knowledgeBatchTestParams,
        querystring: knowledgeBatchItemListQuery,
        response: { 200: envelope(knowledgeBatchItemList), ...guarded },
      },
    },
    async (req) => {
      const { knowledgeBaseId, testId } = req.params;
      return ok(await listBatchItems(db, requireProject(req).id, knowledgeBaseId, testId, req.query));
    },
  );

  app.get(
    `${BASE}/:testId/compare`,
    {
      schema: {
        tags,
        security,
        summary: '与之前的一次测试对比（按问题文本匹配：指标变化、变好与变差的问题）',
        params: knowledgeBatchTestParams,
        querystring: knowledgeBatchCompareQuery,
        response: { 200: envelope(knowledgeBatchComparison), ...guarded },
      },
    },
    async (req) => {
      const { knowledgeBaseId, testId } = req.params;
      return ok(await compareBatchTests(db, requireProject(req).id, knowledgeBaseId, testId, req.query.with));
    },
  );

  app.get(
    `${BASE}/:testId/skipped.csv`,
    {
      schema: {
        tags,
        security,
        summary: '下载上传时跳过的行（CSV：行号、问题、原因）',
        params: knowledgeBatchTestParams,
      },
    },
    async (req, reply) => {
      const { knowledgeBaseId, testId } = req.params;
      const file = await skippedRowsCsv(db, requireProject(req).id, knowledgeBaseId, testId);
      return sendDownload(reply, file, 'skipped-rows.csv');
    },
  );

  app.delete(
    `${BASE}/:testId`,
    {
      schema: {
        tags,
        security,
        summary: '删除批量测试（运行中的测试随之停止）',
        params: knowledgeBatchTestParams,
        response: { 200: envelope(z.null()), ...guarded },
      },
    },
    async (req) => {
      const { knowledgeBaseId, testId } = req.params;
      await deleteBatchTest(db, requireProject(req).id, knowledgeBaseId, testId);
      return ok(null);
    },
  );
};
