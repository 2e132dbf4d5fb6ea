import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  envelope,
  errorEnvelope,
  lintSmsTemplate,
  paged,
  projectIdParams,
  smsReviewListQuery,
  smsSignature,
  smsSignatureWriteRequest,
  smsTemplate,
  smsTemplateWriteRequest,
} from '@callpilot/contracts';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError, badRequest } from '../../lib/errors';
import { receiveFiles } from '../../lib/multipart';
import { ok } from '../../lib/reply';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { cloudReviewSubmitter } from './sms-cloud';
import {
  createSignature,
  createTemplate,
  deleteReviewed,
  getSignature,
  getTemplate,
  listSignatures,
  listTemplates,
  setSignatureProof,
  submitForReview,
  toSignature,
  toTemplate,
  updateSignature,
  updateTemplate,
  withdrawFromReview,
} from './sms-review.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };
const conflictable = { ...guarded, 409: errorEnvelope, 502: errorEnvelope };
const idParams = projectIdParams.extend({ id: z.string().min(1).max(64) });
export const SMS_PROOF_MAX_BYTES = 5 * 1024 * 1024;

/** The proof files a reviewer accepts, recognised by content rather than by name. */
function proofKind(bytes: Buffer): 'png' | 'jpg' | 'pdf' | null {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpg';
  if (bytes.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  return null;
}

/**
 * 签名 and 模板 (短信管理) with their review: any project member prepares and submits them (as
 * with assistants); the decision is the platform operator's (`npm run admin -- sms:review`) with
 * the development outbox, or the provider's.
 */
export const smsReviewRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env, runtime }) => {
  const tags = ['短信管理'];
  const security = [{ bearerAuth: [] }];
  const now = () => runtime.clock.now();
  const signatures = '/api/project/:projectId/sms/signatures';
  const templates = '/api/project/:projectId/sms/templates';

  await app.register(fastifyMultipart, {
    limits: { fileSize: SMS_PROOF_MAX_BYTES + 1, files: 1, fields: 5 },
    throwFileSizeLimit: false,
  });

  // --- signatures --------------------------------------------------------------------------------
  app.get(
    signatures,
    {
      schema: {
        tags,
        security,
        summary: '签名列表（分页，可按状态、名称筛选）',
        params: projectIdParams,
        querystring: smsReviewListQuery,
        response: { 200: envelope(paged(smsSignature)), ...guarded },
      },
    },
    async (req) => ok(await listSignatures(db, requireProject(req).id, req.query)),
  );
  app.get(
    `${signatures}/:id`,
    {
      schema: {
        tags,
        security,
        summary: '签名详情',
        params: idParams,
        response: { 200: envelope(smsSignature), ...guarded },
      },
    },
    async (req) => ok(await getSignature(db, requireProject(req).id, req.params.id)),
  );
  app.post(
    signatures,
    {
      schema: {
        tags,
        security,
        summary: '新建签名（待提交；名称 2–12 个中文、英文或数字，显示为【名称】）',
        params: projectIdParams,
        body: smsSignatureWriteRequest,
        response: { 200: envelope(smsSignature), ...conflictable },
      },
    },
    async (req) => {
      const project = requireProject(req);
      return ok(await createSignature(db, project.id, req.user?.id ?? null, req.body));
    },
  );
  app.put(
    `${signatures}/:id`,
    {
      schema: {
        tags,
        security,
        summary: '修改签名（待提交、未通过或已撤回的；修改后回到待提交）',
        params: idParams,
        body: smsSignatureWriteRequest,
        response: { 200: envelope(smsSignature), ...conflictable },
      },
    },
    async (req) => ok(await updateSignature(db, requireProject(req).id, req.params.id, req.body, now())),
  );
  app.post(
    `${signatures}/:id/proof`,
    {
      schema: {
        tags,
        security,
        summary: '上传签名证明材料（multipart/form-data，字段 file：PNG、JPG 或 PDF，不超过 5 MB）',
        params: idParams,
        response: { 200: envelope(smsSignature), ...conflictable },
      },
    },
    async (req) => {
      const project = requireProject(req);
      await getSignature(db, project.id, req.params.id);
      if (!req.isMultipart())
        throw new AppError(400, 'VALIDATION_FAILED', '请以 multipart/form-data 方式上传文件');
      const files = await receiveFiles(req, {
        field: 'file',
        tooManyFiles: () => badRequest('字段 file：一次只能上传一个证明文件'),
      });
      const file = files[0];
      if (!file) throw badRequest('字段 file：请选择证明文件');
      if (file.truncated || file.bytes.length > SMS_PROOF_MAX_BYTES)
        throw badRequest('字段 file：证明文件不能超过 5 MB');
      const kind = proofKind(file.bytes);
      if (!kind) throw badRequest('字段 file：证明文件须为 PNG、JPG 图片或 PDF 文档');
      const stored = path.join(env.dataDir, 'sms-proofs', project.id, `${req.params.id}.${kind}`);
      // Written beside its place and moved there only once the row accepts it: a signature under
      // review refuses a new proof (409), and must keep the very file its reviewer was sent.
      const staging = `${stored}.${randomUUID()}.part`;
      await fs.mkdir(path.dirname(stored), { recursive: true });
      await fs.writeFile(staging, file.bytes);
      let signature: Awaited<ReturnType<typeof setSignatureProof>>;
      try {
        signature = await setSignatureProof(
          db,
          project.id,
          req.params.id,
          { path: stored, name: file.fileName.slice(0, 200) },
          now(),
        );
      } catch (err) {
        await fs.rm(staging, { force: true });
        throw err;
      }
      await fs.rename(staging, stored);
      return ok(signature);
    },
  );
  app.post(
    `${signatures}/:id/submit`,
    {
      schema: {
        tags,
        security,
        summary: '提交签名审核（须已上传证明材料）',
        params: idParams,
        response: { 200: envelope(smsSignature), ...conflictable },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const row = await submitForReview(
        db,
        'signature',
        projectId,
        req.params.id,
        now(),
        (r) => {
          if (!('proofPath' in r) || !r.proofPath)
            throw badRequest('请先上传签名证明材料（营业执照、App 截图等）');
        },
        cloudReviewSubmitter(db, runtime.sms.clients, projectId),
      );
      return ok(toSignature(row as Parameters<typeof toSignature>[0]));
    },
  );
  app.post(
    `${signatures}/:id/withdraw`,
    {
      schema: {
        tags,
        security,
        summary: '撤回审核中的签名',
        params: idParams,
        response: { 200: envelope(smsSignature), ...conflictable },
      },
    },
    async (req) => {
      const row = await withdrawFromReview(db, 'signature', requireProject(req).id, req.params.id, now());
      return ok(toSignature(row as Parameters<typeof toSignature>[0]));
    },
  );
  app.delete(
    `${signatures}/:id`,
    {
      schema: {
        tags,
        security,
        summary: '删除签名',
        params: idParams,
        response: { 200: envelope(z.null()), ...guarded },
      },
    },
    async (req) => {
      await deleteReviewed(db, 'signature', requireProject(req).id, req.params.id);
      return ok(null);
    },
  );

  // --- templates ---------------------------------------------------------------------------------
  app.get(
    templates,
    {
      schema: {
        tags,
        security,
        summary: '模板列表（分页，可按状态、名称筛选）',
        params: projectIdParams,
        querystring: smsReviewListQuery,
        response: { 200: envelope(paged(smsTemplate)), ...guarded },
      },
    },
    async (req) => ok(await listTemplates(db, requireProject(req).id, req.query)),
  );
  app.get(
    `${templates}/:id`,
    {
      schema: {
        tags,
        security,
        summary: '模板详情',
        params: idParams,
        response: { 200: envelope(smsTemplate), ...guarded },
      },
    },
    async (req) => ok(await getTemplate(db, requireProject(req).id, req.params.id)),
  );
  app.post(
    templates,
    {
      schema: {
        tags,
        security,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: SMS templates write their variables as ${name}
        summary: '新建模板（待提交；内容不超过 500 字，变量写作 ${name}）',
        params: projectIdParams,
        body: smsTemplateWriteRequest,
        response: { 200: envelope(smsTemplate), ...conflictable },
      },
    },
    async (req) => ok(await createTemplate(db, requireProject(req).id, req.user?.id ?? null, req.body)),
  );
  app.put(
    `${templates}/:id`,
    {
      schema: {
        tags,
        security,
        summary: '修改模板（待提交、未通过或已撤回的；修改后回到待提交）',
        params: idParams,
        body: smsTemplateWriteRequest,
        response: { 200: envelope(smsTemplate), ...conflictable },
      },
    },
    async (req) => ok(await updateTemplate(db, requireProject(req).id, req.params.id, req.body, now())),
  );
  app.post(
    `${templates}/:id/submit`,
    {
      schema: {
        tags,
        security,
        summary: '提交模板审核（先按模板规范检查，有错误时拒绝并逐条说明）',
        params: idParams,
        response: { 200: envelope(smsTemplate), ...conflictable },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      const row = await submitForReview(
        db,
        'template',
        projectId,
        req.params.id,
        now(),
        (r) => {
          if (!('content' in r)) return;
          // What a reviewer would refuse is refused here, each rule named (the console shows them live).
          const errors = lintSmsTemplate({ type: r.type, content: r.content }).issues.filter(
            (i) => i.level === 'error',
          );
          if (errors.length) throw badRequest(`模板未通过检查：${errors.map((i) => i.message).join('；')}`);
        },
        cloudReviewSubmitter(db, runtime.sms.clients, projectId),
      );
      return ok(toTemplate(row as Parameters<typeof toTemplate>[0]));
    },
  );
  app.post(
    `${templates}/:id/withdraw`,
    {
      schema: {
        tags,
        security,
        summary: '撤回审核中的模板',
        params: idParams,
        response: { 200: envelope(smsTemplate), ...conflictable },
      },
    },
    async (req) => {
      const row = await withdrawFromReview(db, 'template', requireProject(req).id, req.params.id, now());
      return ok(toTemplate(row as Parameters<typeof toTemplate>[0]));
    },
  );
  app.delete(
    `${templates}/:id`,
    {
      schema: {
        tags,
        security,
        summary: '删除模板',
        params: idParams,
        response: { 200: envelope(z.null()), ...guarded },
      },
    },
    async (req) => {
      await deleteReviewed(db, 'template', requireProject(req).id, req.params.id);
      return ok(null);
    },
  );
};
