import {
  envelope,
  hitTestRequest,
  hitTestResult,
  KNOWLEDGE_FILE_TYPES,
  KNOWLEDGE_MAX_FILE_BYTES,
  KNOWLEDGE_MAX_FILES_PER_UPLOAD,
  knowledgeBaseList,
  knowledgeBaseListQuery,
  knowledgeDocument,
  knowledgeUploadResult,
  OPENDOCK_TAGS,
  openKnowledgeBaseIdParams,
  openKnowledgeDocumentParams,
} from '@callpilot/contracts';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ok } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { OPENDOCK_PREFIX, requireApiKey } from '../../plugins/api-key-auth';
import { embedderForProject } from '../knowledge/embedder';
import { receiveKnowledgeUpload } from '../knowledge/knowledge.routes';
import { getDocument, hitTest, listKnowledgeBases } from '../knowledge/knowledge.service';
import { hitTestLlmAssist } from '../knowledge/llm-assist';
import type { ModuleOptions } from '../module-options';
import { openFailures, openSecurity, scope } from './opendock-schema';

/** Knowledge bases are built in the console; customers' systems keep their documents current. */
export const openKnowledgeRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (
  app,
  { db, env, runtime },
) => {
  const secret = loadAppSecret(env);
  const tags = [OPENDOCK_TAGS.knowledge];
  const security = openSecurity;
  const BASE = `${OPENDOCK_PREFIX}/knowledge-bases`;

  // The console's limits, registered inside this plugin only (other routes keep refusing multipart).
  await app.register(fastifyMultipart, {
    limits: { fileSize: KNOWLEDGE_MAX_FILE_BYTES + 1, files: KNOWLEDGE_MAX_FILES_PER_UPLOAD, fields: 20 },
    throwFileSizeLimit: false,
  });

  app.get(
    BASE,
    {
      config: scope('knowledge', 'read'),
      schema: {
        tags,
        security,
        summary: '知识库列表',
        description: '分页，可按名称搜索；含文档数、分段数与解析中的文档数。',
        querystring: knowledgeBaseListQuery,
        response: { 200: envelope(knowledgeBaseList), ...openFailures },
      },
    },
    async (req) => ok(await listKnowledgeBases(db, requireApiKey(req).projectId, req.query)),
  );

  app.post(
    `${BASE}/:knowledgeBaseId/documents`,
    {
      config: scope('knowledge', 'write'),
      schema: {
        tags,
        security,
        summary: '上传文档',
        description:
          `multipart/form-data，文件放在 files 字段，每次最多 ${KNOWLEDGE_MAX_FILES_PER_UPLOAD} 个文件、` +
          `每个不超过 ${KNOWLEDGE_MAX_FILE_BYTES / 1024 / 1024} MB。支持 ${KNOWLEDGE_FILE_TYPES.join('、')}：` +
          'csv、xlsx 为问答对（表头含“问题”“答案”两列，可选“相似问题”列）。逐个文件给出结果：通过检查的文件进入解析队列' +
          '（accepted，status 为 queued），未通过的在 rejected 中说明原因且不保存。解析进度用「文档状态」接口查询，' +
          'status 为 ready 后即可被小助手检索。',
        params: openKnowledgeBaseIdParams,
        consumes: ['multipart/form-data'],
        response: { 200: envelope(knowledgeUploadResult), ...openFailures },
      },
    },
    async (req) => {
      const projectId = requireApiKey(req).projectId;
      return ok(await receiveKnowledgeUpload(db, runtime, req, projectId, req.params.knowledgeBaseId));
    },
  );

  app.get(
    `${BASE}/:knowledgeBaseId/documents/:documentId`,
    {
      config: scope('knowledge', 'read'),
      schema: {
        tags,
        security,
        summary: '文档状态',
        description:
          '文档的解析状态：queued 排队中、parsing 解析中（progress 为 0-100）、ready 可用（segmentCount 为分段数）、' +
          'failed 失败（error 为原因）。',
        params: openKnowledgeDocumentParams,
        response: { 200: envelope(knowledgeDocument), ...openFailures },
      },
    },
    async (req) => {
      const { knowledgeBaseId, documentId } = req.params;
      return ok(await getDocument(db, requireApiKey(req).projectId, knowledgeBaseId, documentId));
    },
  );

  app.post(
    `${BASE}/:knowledgeBaseId/hit-test`,
    {
      config: scope('knowledge', 'read'),
      schema: {
        tags,
        security,
        summary: '命中测试',
        description:
          '按问题检索知识库分段，返回排序后的分段、校准后的置信度（0-1，可与小助手的相似度阈值比较）' +
          '与判定（可回答，或拒答及原因），与控制台的命中测试相同。传 llmProviderId 时先由该模型配置的' +
          '对话模型改写问题、重排候选。只读取，不修改知识库。',
        params: openKnowledgeBaseIdParams,
        body: hitTestRequest,
        response: { 200: envelope(hitTestResult), ...openFailures },
      },
    },
    async (req) => {
      const projectId = requireApiKey(req).projectId;
      const llm = await hitTestLlmAssist(db, secret, projectId, req.body.llmProviderId);
      const embedder = await embedderForProject(db, secret, projectId);
      return ok(await hitTest(db, projectId, req.params.knowledgeBaseId, req.body, embedder, llm));
    },
  );
};
