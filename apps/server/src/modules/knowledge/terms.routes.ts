import {
  builtinKnowledgeTerm,
  envelope,
  errorEnvelope,
  knowledgeTerm,
  knowledgeTermExportQuery,
  knowledgeTermImportResult,
  knowledgeTermList,
  knowledgeTermListQuery,
  knowledgeTermParams,
  knowledgeTermWriteRequest,
  projectIdParams,
} from '@callpilot/contracts';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { badRequest } from '../../lib/errors';
import { receiveFiles } from '../../lib/multipart';
import { ok, sendDownload } from '../../lib/reply';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import {
  builtinTerms,
  createTerm,
  deleteTerm,
  exportTerms,
  importTerms,
  listTerms,
  TERMS_FILE_MAX_BYTES,
  updateTerm,
} from './terms.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const writes = { ...guarded, 409: errorEnvelope };
const BASE = '/api/project/:projectId/knowledge-terms';

/** 口语词典: the project's own colloquial → standard terms, applied to every base of the project. */
export const knowledgeTermsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = ['知识库'];
  const security = [{ bearerAuth: [] }];

  // Registered inside this module only, so every other route keeps refusing multipart bodies.
  await app.register(fastifyMultipart, {
    // One byte over the limit is enough to know a file is too large; the rest is not read.
    limits: { fileSize: TERMS_FILE_MAX_BYTES + 1, files: 1, fields: 5 },
    throwFileSizeLimit: false,
  });

  app.get(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '口语词典：本项目的词条（分页，关键词匹配标准词与口语说法）',
        params: projectIdParams,
        querystring: knowledgeTermListQuery,
        response: { 200: envelope(knowledgeTermList), ...guarded },
      },
    },
    async (req) => ok(await listTerms(db, requireProject(req).id, req.query)),
  );

  app.post(
    BASE,
    {
      schema: {
        tags,
        security,
        summary: '新增词条（每个项目最多 500 条；一个口语说法只能属于一个标准词）',
        params: projectIdParams,
        body: knowledgeTermWriteRequest,
        response: { 200: envelope(knowledgeTerm), ...writes },
      },
    },
    async (req) => ok(await createTerm(db, requireProject(req).id, req.body)),
  );

  app.get(
    `${BASE}/builtin`,
    {
      schema: {
        tags,
        security,
        summary: '内置口语词典（只读，对所有项目生效）',
        params: projectIdParams,
        response: { 200: envelope(z.array(builtinKnowledgeTerm)), ...guarded },
      },
    },
    async (req) => {
      requireProject(req);
      return ok(builtinTerms());
    },
  );

  app.get(
    `${BASE}/export`,
    {
      schema: {
        tags,
        security,
        summary: '导出本项目的口语词典（“标准词”“口语说法”两列，口语说法以 | 分隔）',
        params: projectIdParams,
        querystring: knowledgeTermExportQuery,
        description: '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。',
      },
    },
    async (req, reply) => {
      const file = await exportTerms(db, requireProject(req).id, req.query.format);
      return sendDownload(reply, file, `knowledge-terms.${req.query.format}`);
    },
  );

  app.post(
    `${BASE}/import`,
    {
      schema: {
        tags,
        security,
        summary: '导入口语词典（multipart/form-data，字段 file：.csv 或 .xlsx，≤ 2 MB）',
        description:
          '表头含“标准词”“口语说法”两列，多个口语说法用 |、｜、、、,、，或换行分隔。已有的标准词合并新的口语说法，' +
          '不覆盖；不符合规则的行不导入，并逐行说明原因。',
        params: projectIdParams,
        response: { 200: envelope(knowledgeTermImportResult), ...guarded, 413: errorEnvelope },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      if (!req.isMultipart()) throw badRequest('请以 multipart/form-data 方式上传文件（字段 file）');
      const files = await receiveFiles(req, {
        field: 'file',
        tooManyFiles: () => badRequest('字段 file：一次只能上传一个文件'),
      });
      const file = files.find((f) => f.field === 'file');
      if (!file) throw badRequest('字段 file：请选择要上传的文件');
      return ok(await importTerms(db, projectId, file));
    },
  );

  app.put(
    `${BASE}/:termId`,
    {
      schema: {
        tags,
        security,
        summary: '修改词条',
        params: knowledgeTermParams,
        body: knowledgeTermWriteRequest,
        response: { 200: envelope(knowledgeTerm), ...writes },
      },
    },
    async (req) => ok(await updateTerm(db, requireProject(req).id, req.params.termId, req.body)),
  );

  app.delete(
    `${BASE}/:termId`,
    {
      schema: {
        tags,
        security,
        summary: '删除词条',
        params: knowledgeTermParams,
        response: { 200: envelope(z.null()), ...guarded },
      },
    },
    async (req) => {
      await deleteTerm(db, requireProject(req).id, req.params.termId);
      return ok(null);
    },
  );
};
