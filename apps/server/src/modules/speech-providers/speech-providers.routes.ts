import {
  envelope,
  errorEnvelope,
  pageQuery,
  projectIdParams,
  speechProvider,
  speechProviderIdParams,
  speechProviderList,
  speechProviderTestResult,
  speechProviderWriteRequest,
} from '@callpilot/contracts';
import fastifyMultipart from '@fastify/multipart';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { wavToPcm } from '../../engine/speech/resample';
import type { TelephonyUtterance } from '../../engine/speech/types';
import { badRequest } from '../../lib/errors';
import { receiveFiles } from '../../lib/multipart';
import { ok } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { assertCanManage } from '../provider-profiles/provider-profiles';
import {
  createSpeechProvider,
  deleteSpeechProvider,
  getSpeechProvider,
  listSpeechProviders,
  MAX_RECORDING_BYTES,
  recordingFromWav,
  SPEECH_PROFILE,
  testSpeechProvider,
  updateSpeechProvider,
} from './speech-providers.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope };
const withTarget = { ...guarded, 404: errorEnvelope };

/** 语音识别配置: the project's speech-recognition endpoints, for assistants on real lines. */
export const speechProvidersRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (
  app,
  { db, env, runtime },
) => {
  const tags = ['语音识别配置'];
  const security = [{ bearerAuth: [] }];
  // Resolved at start, so an unreadable DATA_DIR/app-secret stops the server instead of a later request.
  const secret = loadAppSecret(env);
  const base = '/api/project/:projectId/speech-providers';
  const item = `${base}/:speechProviderId`;

  // Registered inside this module only, for the test's uploaded recording; other routes keep
  // refusing multipart bodies. One byte over the limit is enough to know a file is too large.
  await app.register(fastifyMultipart, {
    limits: { fileSize: MAX_RECORDING_BYTES + 1, files: 1, fields: 5 },
    throwFileSizeLimit: false,
  });

  // "您好" in the offline voice, as a phone line would carry it; synthesised once per process.
  let sample: Promise<TelephonyUtterance> | undefined;
  const greeting = () => {
    sample ??= runtime
      .speech()
      .synthesize('您好', { voiceId: 'cmn', speed: 1, volume: 80 })
      .then((speech) => ({ pcm: wavToPcm(speech.audio, 8000), sampleRate: 8000 as const }));
    sample.catch(() => {
      sample = undefined;
    });
    return sample;
  };

  app.get(
    base,
    {
      schema: {
        tags,
        security,
        summary: '语音识别配置列表（密钥只返回是否已填写与末 4 位；AppID、AccessKey ID、SecretId 照常返回）',
        params: projectIdParams,
        querystring: pageQuery,
        response: { 200: envelope(speechProviderList), ...guarded },
      },
    },
    async (req) => ok(await listSpeechProviders(db, requireProject(req).id, req.query)),
  );

  app.get(
    item,
    {
      schema: {
        tags,
        security,
        summary: '语音识别配置详情',
        params: speechProviderIdParams,
        response: { 200: envelope(speechProvider), ...withTarget },
      },
    },
    async (req) => ok(await getSpeechProvider(db, requireProject(req).id, req.params.speechProviderId)),
  );

  app.post(
    base,
    {
      config: { audit: { action: 'provider.changed', targetType: 'speech_provider', verb: '新增语音识别' } },
      schema: {
        tags,
        security,
        summary: '新建语音识别配置（仅所有者或管理员）',
        params: projectIdParams,
        body: speechProviderWriteRequest,
        response: { 200: envelope(speechProvider), ...guarded, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManage(project, SPEECH_PROFILE);
      return ok(await createSpeechProvider(db, secret, project.id, req.body));
    },
  );

  app.put(
    item,
    {
      config: {
        audit: {
          action: 'provider.changed',
          targetType: 'speech_provider',
          targetParam: 'speechProviderId',
          verb: '修改语音识别',
        },
      },
      schema: {
        tags,
        security,
        summary: '修改语音识别配置（不填密钥则保留原值，切换服务类型时须重新填写；仅所有者或管理员）',
        params: speechProviderIdParams,
        body: speechProviderWriteRequest,
        response: { 200: envelope(speechProvider), ...withTarget, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManage(project, SPEECH_PROFILE);
      return ok(await updateSpeechProvider(db, secret, project.id, req.params.speechProviderId, req.body));
    },
  );

  app.delete(
    item,
    {
      config: {
        audit: {
          action: 'provider.changed',
          targetType: 'speech_provider',
          targetParam: 'speechProviderId',
          verb: '删除语音识别',
        },
      },
      schema: {
        tags,
        security,
        summary: '删除语音识别配置（仍被小助手使用时拒绝；仅所有者或管理员）',
        params: speechProviderIdParams,
        response: { 200: envelope(z.null()), ...withTarget, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManage(project, SPEECH_PROFILE);
      await deleteSpeechProvider(db, project.id, req.params.speechProviderId);
      return ok(null);
    },
  );

  app.post(
    `${item}/test`,
    {
      schema: {
        tags,
        security,
        summary:
          '测试语音识别配置：识别内置的样例语音（您好），或上传的录音（multipart/form-data，字段 file：16 位 WAV，≤ 60 秒），返回识别结果与耗时',
        params: speechProviderIdParams,
        response: { 200: envelope(speechProviderTestResult), ...withTarget },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      let recording: TelephonyUtterance | undefined;
      if (req.isMultipart()) {
        const files = await receiveFiles(req, {
          field: 'file',
          tooManyFiles: () => badRequest('字段 file：一次只能上传一段录音'),
        });
        const file = files.find((f) => f.field === 'file');
        if (!file) throw badRequest('字段 file：请选择要识别的录音文件');
        recording = recordingFromWav(file.bytes, file.truncated);
      }
      return ok(
        await testSpeechProvider(db, secret, projectId, req.params.speechProviderId, {
          sample: greeting,
          recording,
          onUnexpected: (err) =>
            req.log.warn({ err: { name: (err as Error)?.name } }, 'speech provider test failed'),
        }),
      );
    },
  );
};
