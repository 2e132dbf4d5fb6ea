import {
  envelope,
  errorEnvelope,
  hitTestRequest,
  hitTestResult,
  KNOWLEDGE_MAX_FILE_BYTES,
  KNOWLEDGE_MAX_FILES_PER_UPLOAD,
  knowledgeBase,
  knowledgeBaseIdParams,
  knowledgeBaseList,
  knowledgeBaseListQuery,
  knowledgeBaseWriteRequest,
  knowledgeDocument,
  knowledgeDocumentList,
  knowledgeDocumentParams,
  knowledgeExportQuery,
  knowledgeSegment,
  knowledgeSegmentList,
  knowledgeSegmentListQuery,
  knowledgeSegmentParams,
  knowledgeSegmentUpdateRequest,
  knowledgeUploadResult,
  pageQuery,
  projectIdParams,
} from '@callpilot/contracts';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Database } from '../../db/client';
import { AppError } from '../../lib/errors';
import { receiveFiles } from '../../lib/multipart';
import { ok, sendDownload } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { requireProject } from '../../plugins/project-access';
import type { Runtime } from '../../runtime/runtime';
import type { ModuleOptions } from '../module-options';
import { embedderForProject } from './embedder';
import {
  createKnowledgeBase,
  deleteDocument,
  deleteKnowledgeBase,
  exportKnowledgeBase,
  getKnowledgeBase,
  hitTest,
  listDocuments,
  listKnowledgeBases,
  listSegments,
  reindexDocument,
  tooManyFiles,
  type UploadedFile,
  updateKnowledgeBase,
  updateSegment,
  uploadDocuments,
} from './knowledge.service';
import { hitTestLlmAssist } from './llm-assist';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const BASE = '/api/project/:projectId/knowledge-bases/:knowledgeBaseId';

export const knowledgeRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env, runtime }) => {
  const secret = loadAppSecret(env);
  const projectEmbedder = (database: Database, projectId: string) =>
    embedderForProject(database, secret, projectId);
  const tags = ['知识库'];
  const security = [{ bearerAuth: [] }];

  // Registered inside this module only, so every other route keeps refusing multipart bodies.
  await app.register(fastifyMultipart, {
    // One byte over the limit is enough to know a file is too large; the rest is not read.
    limits: { fileSize: KNOWLEDGE_MAX_FILE_BYTES + 1, files: KNOWLEDGE_MAX_FILES_PER_UPLOAD, fields: 20 },
    throwFileSizeLimit: false,
  });

  app.get(
    '/api/project/:projectId/knowledge-bases',
    {
      schema: {
        tags,
        security,
        summary: '知识库列表（分页，可按名称搜索）',
        params: projectIdParams,
        querystring: knowledgeBaseListQuery,
        response: { 200: envelope(knowledgeBaseList), ...guarded },
      },
    },
    async (req) => ok(await listKnowledgeBases(db, requireProject(req).id, req.query)),
  );

  app.post(
    '/api/project/:projectId/knowledge-bases',
    {
      schema: {
        tags,
        security,
        summary: '新建知识库（受知识库数量额度限制）',
        params: projectIdParams,
        body: knowledgeBaseWriteRequest,
        response: { 200: envelope(knowledgeBase), ...guarded, 409: errorEnvelope },
      },
    },
    async (req) => ok(await createKnowledgeBase(db, requireProject(req).id, req.body)),
  );

  app.get(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '知识库详情',
        params: knowledgeBaseIdParams,
        response: { 200: envelope(knowledgeBase), ...guarded },
      },
    },
    async (req) => ok(await getKnowledgeBase(db, requireProject(req).id, req.params.knowledgeBaseId)),
  );

  app.put(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '修改知识库（新的分段设置对之后上传或重新解析的文档生效）',
        params: knowledgeBaseIdParams,
        body: knowledgeBaseWriteRequest,
        response: { 200: envelope(knowledgeBase), ...guarded, 409: errorEnvelope },
      },
    },
    async (req) =>
      ok(await updateKnowledgeBase(db, requireProject(req).id, req.params.knowledgeBaseId, req.body)),
  );

  app.delete(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '删除知识库及其全部文档与分段',
        params: knowledgeBaseIdParams,
        response: { 200: envelope(z.null()), ...guarded },
      },
    },
    async (req) => {
      await deleteKnowledgeBase(db, requireProject(req).id, req.params.knowledgeBaseId);
      return ok(null);
    },
  );

  app.post(
    `${BASE}/documents`,
    {
      schema: {
        tags,
        security,
        summary: '上传文档（multipart/form-data，最多 10 个文件，每个不超过 20 MB）',
        description:
          '支持 txt、md、pdf、docx，以及 csv、xlsx 问答对（表头含“问题”“答案”两列，可选“相似问题”列，' +
          '多个相似问用换行、|、｜、；或 ; 分隔，每个问题最多 20 个、每个不超过 200 个字符）。逐个文件给出结果：' +
          '通过检查的文件进入解析队列，未通过的说明原因且不保存。',
        params: knowledgeBaseIdParams,
        response: { 200: envelope(knowledgeUploadResult), ...guarded },
      },
    },
    async (req) => {
      return ok(
        await receiveKnowledgeUpload(db, runtime, req, requireProject(req).id, req.params.knowledgeBaseId),
      );
    },
  );

  app.get(
    `${BASE}/documents`,
    {
      schema: {
        tags,
        security,
        summary: '文档列表（状态：排队中 / 解析中 / 可用 / 失败，解析进度与失败原因）',
        params: knowledgeBaseIdParams,
        querystring: pageQuery,
        response: { 200: envelope(knowledgeDocumentList), ...guarded },
      },
    },
    async (req) => ok(await listDocuments(db, requireProject(req).id, req.params.knowledgeBaseId, req.query)),
  );

  app.delete(
    `${BASE}/documents/:documentId`,
    {
      schema: {
        tags,
        security,
        summary: '删除文档及其分段',
        params: knowledgeDocumentParams,
        response: { 200: envelope(z.null()), ...guarded },
      },
    },
    async (req) => {
      const { knowledgeBaseId, documentId } = req.params;
      await deleteDocument(db, requireProject(req).id, knowledgeBaseId, documentId);
      return ok(null);
    },
  );

  app.post(
    `${BASE}/documents/:documentId/reindex`,
    {
      schema: {
        tags,
        security,
        summary: '重新解析文档（按知识库当前的分段设置）',
        params: knowledgeDocumentParams,
        response: { 200: envelope(knowledgeDocument), ...guarded },
      },
    },
    async (req) => {
      const { knowledgeBaseId, documentId } = req.params;
      const document = await reindexDocument(db, requireProject(req).id, knowledgeBaseId, documentId);
      runtime.wakeKnowledge();
      return ok(document);
    },
  );

  app.get(
    `${BASE}/segments`,
    {
      schema: {
        tags,
        security,
        summary: '分段列表（分页，可按文档与关键词筛选）',
        params: knowledgeBaseIdParams,
        querystring: knowledgeSegmentListQuery,
        response: { 200: envelope(knowledgeSegmentList), ...guarded },
      },
    },
    async (req) => ok(await listSegments(db, requireProject(req).id, req.params.knowledgeBaseId, req.query)),
  );

  app.put(
    `${BASE}/segments/:segmentId`,
    {
      schema: {
        tags,
        security,
        summary: '修改分段内容（问答对修改问题、答案或相似问）或启用/停用分段',
        params: knowledgeSegmentParams,
        body: knowledgeSegmentUpdateRequest,
        response: { 200: envelope(knowledgeSegment), ...guarded },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const { knowledgeBaseId, segmentId } = req.params;
      const embedder = await projectEmbedder(db, projectId);
      return ok(await updateSegment(db, projectId, knowledgeBaseId, segmentId, req.body, embedder));
    },
  );

  app.get(
    `${BASE}/export`,
    {
      schema: {
        tags,
        security,
        summary: '导出知识库（md：全部分段；csv / xlsx：问答对，“问题”“答案”“相似问题”三列）',
        params: knowledgeBaseIdParams,
        querystring: knowledgeExportQuery,
        description: '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。',
      },
    },
    async (req, reply) => {
      const file = await exportKnowledgeBase(
        db,
        requireProject(req).id,
        req.params.knowledgeBaseId,
        req.query.format,
      );
      return sendDownload(reply, file, `knowledge-base.${req.query.format}`);
    },
  );

  app.post(
    `${BASE}/hit-test`,
    {
      schema: {
        tags,
        security,
        summary: '命中测试：按问题检索分段，给出排序与得分（0-1）',
        params: knowledgeBaseIdParams,
        body: hitTestRequest,
        response: { 200: envelope(hitTestResult), ...guarded },
      },
      config: { readOnlySafe: true },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const llm = await hitTestLlmAssist(db, secret, projectId, req.body.llmProviderId);
      const embedder = await projectEmbedder(db, projectId);
      return ok(await hitTest(db, projectId, req.params.knowledgeBaseId, req.body, embedder, llm));
    },
  );
};

/**
 * 上传文档 for the console and the open API alike: the base is checked before any file is read,
 * then the files are stored and queued, and the indexing worker woken.
 */
export async function receiveKnowledgeUpload(
  db: Database,
  runtime: Runtime,
  req: FastifyRequest,
  projectId: string,
  knowledgeBaseId: string,
) {
  await getKnowledgeBase(db, projectId, knowledgeBaseId);
  if (!req.isMultipart()) {
    throw new AppError(400, 'VALIDATION_FAILED', '请以 multipart/form-data 方式上传文件');
  }
  const files: UploadedFile[] = await receiveFiles(req, {
    field: 'files',
    tooManyFiles: () => tooManyFiles(KNOWLEDGE_MAX_FILES_PER_UPLOAD),
  });
  if (files.length === 0) throw new AppError(400, 'VALIDATION_FAILED', '字段 files：请选择要上传的文件');
  const result = await uploadDocuments(db, projectId, knowledgeBaseId, files);
  if (result.accepted.length > 0) runtime.wakeKnowledge();
  return result;
}
