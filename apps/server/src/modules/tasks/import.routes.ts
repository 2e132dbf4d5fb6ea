import {
  columnMapping,
  envelope,
  errorEnvelope,
  importCommitRequest,
  importPreview,
  importRejectKind,
  importResult,
  pasteImportRequest,
  taskIdParams,
} from '@callpilot/contracts';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { badRequest } from '../../lib/errors';
import { ok, sendDownload } from '../../lib/reply';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { importRejectsCsv, importTemplate } from './import-downloads';
import { IMPORT_MAX_BYTES, parsePastedNumbers } from './import-parse';
import { commitImport, createImport, previewImport } from './import-staging';
import { receiveContactFile } from './import-upload';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const writes = { ...guarded, 409: errorEnvelope, 413: errorEnvelope };
const BASE = '/api/project/:projectId/tasks/:taskId';
const importParams = taskIdParams.extend({ importId: z.string().min(1).max(64) });

/** Contact imports of a task: upload or paste, map columns, preview, commit, rejected rows. */
export const taskImportRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = ['呼出任务'];
  const security = [{ bearerAuth: [] }];

  // Registered inside this module only, so every other route keeps refusing multipart bodies.
  await app.register(fastifyMultipart, {
    // One byte over the limit is enough to know a file is too large; the rest is not read.
    limits: { fileSize: IMPORT_MAX_BYTES + 1, files: 1, fields: 10 },
    throwFileSizeLimit: false,
  });

  app.post(
    `${BASE}/imports`,
    {
      schema: {
        tags,
        security,
        summary: '上传联系人文件（multipart/form-data，字段 file：.csv 或 .xlsx，≤ 20 MB，≤ 100,000 行）',
        params: taskIdParams,
        response: { 200: envelope(importPreview), ...writes },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const { fileName, sheet } = await receiveContactFile(req);
      return ok(await createImport(db, projectId, req.params.taskId, fileName, sheet));
    },
  );

  app.post(
    `${BASE}/imports/paste`,
    {
      schema: {
        tags,
        security,
        summary: '粘贴号码（每行一个，可在逗号或制表符后写姓名）',
        params: taskIdParams,
        body: pasteImportRequest,
        response: { 200: envelope(importPreview), ...writes },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const sheet = parsePastedNumbers(req.body.text);
      return ok(await createImport(db, projectId, req.params.taskId, '粘贴的号码.txt', sheet));
    },
  );

  app.post(
    `${BASE}/imports/:importId/preview`,
    {
      schema: {
        tags,
        security,
        summary: '按新的列映射重新统计',
        params: importParams,
        body: z.object({ mapping: columnMapping }),
        response: { 200: envelope(importPreview), ...writes },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const { taskId, importId } = req.params;
      return ok(await previewImport(db, projectId, taskId, importId, req.body.mapping));
    },
  );

  app.post(
    `${BASE}/imports/:importId/commit`,
    {
      schema: {
        tags,
        security,
        summary: '确认导入：有效且不重复、不在免打扰名单的行成为联系人，其余行记录原因可下载',
        params: importParams,
        body: importCommitRequest,
        response: { 200: envelope(importResult), ...writes },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const { taskId, importId } = req.params;
      if (req.body.importId !== importId) throw badRequest('字段 importId：与地址中的导入记录不一致');
      return ok(await commitImport(db, projectId, taskId, importId, req.body.mapping));
    },
  );

  app.get(
    `${BASE}/imports/:importId/rejects`,
    {
      schema: {
        tags,
        security,
        summary: '下载未导入的行（CSV：原行号、号码、姓名、原因与原始行）',
        params: importParams,
        querystring: z.object({ kind: importRejectKind.optional() }),
        description: '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。',
      },
    },
    async (req, reply) => {
      const projectId = requireProject(req).id;
      const { taskId, importId } = req.params;
      const file = await importRejectsCsv(db, projectId, taskId, importId, req.query.kind);
      return sendDownload(reply, file, `import-rejects${req.query.kind ? `-${req.query.kind}` : ''}.csv`);
    },
  );

  app.get(
    `${BASE}/import-template`,
    {
      schema: {
        tags,
        security,
        summary: '下载联系人导入模板（号码、姓名与小助手的变量，含一行示例）',
        params: taskIdParams,
        querystring: z.object({
          format: z.enum(['csv', 'xlsx'], { error: '模板格式须为 csv 或 xlsx' }).default('xlsx'),
        }),
        description: '成功时应答为文件本身（Content-Disposition: attachment），失败时为统一信封。',
      },
    },
    async (req, reply) => {
      const projectId = requireProject(req).id;
      const file = await importTemplate(db, projectId, req.params.taskId, req.query.format);
      return sendDownload(reply, file, `contacts-template.${req.query.format}`);
    },
  );
};
