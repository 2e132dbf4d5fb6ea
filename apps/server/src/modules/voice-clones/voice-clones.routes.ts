import {
  envelope,
  errorEnvelope,
  pageQuery,
  projectIdParams,
  VOICE_SAMPLE_RULES,
  voiceClone,
  voiceCloneIdParams,
  voiceCloneList,
} from '@callpilot/contracts';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../lib/errors';
import { ok } from '../../lib/reply';
import { textProblem, textProblemRule } from '../../lib/safe-text';
import { loadAppSecret } from '../../lib/secret-box';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import {
  assertCanClone,
  createVoiceClone,
  deleteVoiceClone,
  getVoiceClone,
  listVoiceClones,
  readPublicSample,
  type VoiceCloneContext,
  type VoiceCloneUpload,
} from './voice-clones.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope };
const withTarget = { ...guarded, 404: errorEnvelope };
const TEXT_FIELDS = new Set(['name', 'providerId', 'speakerId']);

/**
 * The form of a create: text fields and one file `sample`. The multipart parser throws plain
 * errors on what a broken client sends; they become 400s naming the form, as lib/multipart does.
 */
async function readUpload(req: FastifyRequest): Promise<VoiceCloneUpload> {
  if (!req.isMultipart()) {
    throw new AppError(
      400,
      'VALIDATION_FAILED',
      '请以 multipart/form-data 方式提交（字段 name、providerId、sample）',
    );
  }
  const upload: VoiceCloneUpload = { fields: {}, sample: undefined };
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        const bytes = await part.toBuffer();
        if (part.fieldname === 'sample' && !upload.sample) {
          upload.sample = { bytes, fileName: part.filename, truncated: part.file.truncated };
        }
      } else if (TEXT_FIELDS.has(part.fieldname) && typeof part.value === 'string') {
        upload.fields[part.fieldname] = part.value;
      }
    }
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
      throw new AppError(413, 'PAYLOAD_TOO_LARGE', '字段 sample：只能上传一个录音文件');
    }
    req.log.info({ err: { code } }, 'malformed multipart body');
    throw new AppError(400, 'VALIDATION_FAILED', '字段 sample：上传内容不完整或格式不正确，请重新上传');
  }
  for (const [field, value] of Object.entries(upload.fields)) {
    const problem = textProblem(value);
    if (problem) throw new AppError(400, 'VALIDATION_FAILED', `字段 ${field}：${textProblemRule[problem]}`);
  }
  return upload;
}

const sendWav = (reply: FastifyReply, wav: Buffer) =>
  reply.header('content-type', 'audio/wav').header('cache-control', 'no-store').send(wav);

/** 声音复刻: cloned voices of the project, and the public sample URL DashScope downloads from. */
export const voiceClonesRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env }) => {
  const tags = ['声音复刻'];
  const security = [{ bearerAuth: [] }];
  // Resolved at start, so an unreadable DATA_DIR/app-secret stops the server instead of a later request.
  const secret = loadAppSecret(env);
  const ctx = (req: FastifyRequest): VoiceCloneContext => ({
    secret,
    dataDir: env.dataDir,
    publicBaseUrl: env.PUBLIC_BASE_URL,
    onRefreshError: (err) =>
      req.log.warn(
        { err: { name: (err as Error)?.name, kind: (err as { kind?: unknown })?.kind } },
        'clone status refresh failed',
      ),
  });
  const base = '/api/project/:projectId/voice-clones';
  const item = `${base}/:voiceCloneId`;

  // Registered inside this module only, so every other route keeps refusing multipart bodies.
  await app.register(fastifyMultipart, {
    limits: { fileSize: VOICE_SAMPLE_RULES.maxBytes + 1, files: 1, fields: 10 },
    throwFileSizeLimit: false,
  });

  app.get(
    base,
    {
      schema: {
        tags,
        security,
        summary: '复刻音色列表（复刻中的音色会顺带向服务商查询最新状态）',
        params: projectIdParams,
        querystring: pageQuery,
        response: { 200: envelope(voiceCloneList), ...guarded },
      },
    },
    async (req) => ok(await listVoiceClones(db, ctx(req), requireProject(req).id, req.query)),
  );

  app.get(
    item,
    {
      schema: {
        tags,
        security,
        summary: '复刻音色详情（复刻中时最多每 5 秒向服务商查询一次状态）',
        params: voiceCloneIdParams,
        response: { 200: envelope(voiceClone), ...withTarget },
      },
    },
    async (req) => ok(await getVoiceClone(db, ctx(req), requireProject(req).id, req.params.voiceCloneId)),
  );

  app.post(
    base,
    {
      schema: {
        tags,
        security,
        summary:
          '复刻声音（multipart/form-data：name、providerId 为阿里云百炼 CosyVoice 或火山引擎的语音合成配置、火山引擎须填 speakerId、sample 为 10～20 秒 16 kHz 及以上的 WAV；受声音克隆额度限制；仅所有者或管理员）',
        params: projectIdParams,
        response: {
          200: envelope(voiceClone),
          ...guarded,
          409: errorEnvelope,
          413: errorEnvelope,
          502: errorEnvelope,
        },
      },
    },
    async (req) => {
      const project = requireProject(req);
      // Refused before the body is read: a member learns nothing from validation messages.
      assertCanClone(project);
      return ok(await createVoiceClone(db, ctx(req), project, await readUpload(req)));
    },
  );

  app.delete(
    item,
    {
      schema: {
        tags,
        security,
        summary: '删除复刻音色（同时删除服务商处的音色；仍被小助手使用时拒绝；仅所有者或管理员）',
        params: voiceCloneIdParams,
        response: { 200: envelope(z.null()), ...withTarget, 409: errorEnvelope, 502: errorEnvelope },
      },
    },
    async (req) => {
      await deleteVoiceClone(db, ctx(req), requireProject(req), req.params.voiceCloneId);
      return ok(null);
    },
  );

  // Outside /api/project/: the vendor cannot log in; the signed, expiring name is the permission.
  app.get(
    '/api/public/voice-samples/:file',
    {
      schema: {
        tags,
        summary: '声音复刻录音的临时下载地址（供阿里云百炼下载，仅在复刻中且未过期时有效）',
        params: z.object({ file: z.string().max(200) }),
        response: { 404: errorEnvelope },
      },
    },
    async (req, reply) => {
      return sendWav(reply, await readPublicSample(db, ctx(req), req.params.file));
    },
  );
};
