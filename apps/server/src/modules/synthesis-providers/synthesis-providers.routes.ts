import {
  envelope,
  errorEnvelope,
  pageQuery,
  projectIdParams,
  synthesisProvider,
  synthesisProviderIdParams,
  synthesisProviderList,
  synthesisProviderTestRequest,
  synthesisProviderTestResult,
  synthesisProviderWriteRequest,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { assertCanManage } from '../provider-profiles/provider-profiles';
import {
  createSynthesisProvider,
  deleteSynthesisProvider,
  getSynthesisProvider,
  listSynthesisProviders,
  SYNTHESIS_PROFILE,
  testSynthesisProvider,
  updateSynthesisProvider,
} from './synthesis-providers.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope };
const withTarget = { ...guarded, 404: errorEnvelope };

/** 语音配置 › 语音合成: the project's speech-synthesis endpoints, the voices its assistants speak with. */
export const synthesisProvidersRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env }) => {
  const tags = ['语音配置'];
  const security = [{ bearerAuth: [] }];
  // Resolved at start, so an unreadable DATA_DIR/app-secret stops the server instead of a later request.
  const secret = loadAppSecret(env);
  const base = '/api/project/:projectId/synthesis-providers';
  const item = `${base}/:synthesisProviderId`;

  app.get(
    base,
    {
      schema: {
        tags,
        security,
        summary: '语音合成配置列表（密钥只返回是否已填写与末 4 位）',
        params: projectIdParams,
        querystring: pageQuery,
        response: { 200: envelope(synthesisProviderList), ...guarded },
      },
    },
    async (req) => ok(await listSynthesisProviders(db, requireProject(req).id, req.query)),
  );

  app.get(
    item,
    {
      schema: {
        tags,
        security,
        summary: '语音合成配置详情',
        params: synthesisProviderIdParams,
        response: { 200: envelope(synthesisProvider), ...withTarget },
      },
    },
    async (req) => ok(await getSynthesisProvider(db, requireProject(req).id, req.params.synthesisProviderId)),
  );

  app.post(
    base,
    {
      config: {
        audit: { action: 'provider.changed', targetType: 'synthesis_provider', verb: '新增语音合成' },
      },
      schema: {
        tags,
        security,
        summary: '新建语音合成配置（仅所有者或管理员）',
        params: projectIdParams,
        body: synthesisProviderWriteRequest,
        response: { 200: envelope(synthesisProvider), ...guarded, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManage(project, SYNTHESIS_PROFILE);
      return ok(await createSynthesisProvider(db, secret, project.id, req.body));
    },
  );

  app.put(
    item,
    {
      config: {
        audit: {
          action: 'provider.changed',
          targetType: 'synthesis_provider',
          targetParam: 'synthesisProviderId',
          verb: '修改语音合成',
        },
      },
      schema: {
        tags,
        security,
        summary: '修改语音合成配置（不填密钥则保留原值，切换服务类型时须重新填写；仅所有者或管理员）',
        params: synthesisProviderIdParams,
        body: synthesisProviderWriteRequest,
        response: { 200: envelope(synthesisProvider), ...withTarget, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManage(project, SYNTHESIS_PROFILE);
      return ok(
        await updateSynthesisProvider(db, secret, project.id, req.params.synthesisProviderId, req.body),
      );
    },
  );

  app.delete(
    item,
    {
      config: {
        audit: {
          action: 'provider.changed',
          targetType: 'synthesis_provider',
          targetParam: 'synthesisProviderId',
          verb: '删除语音合成',
        },
      },
      schema: {
        tags,
        security,
        summary: '删除语音合成配置（仍被小助手、备用音色或复刻音色使用时拒绝；仅所有者或管理员）',
        params: synthesisProviderIdParams,
        response: { 200: envelope(z.null()), ...withTarget, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManage(project, SYNTHESIS_PROFILE);
      await deleteSynthesisProvider(db, project.id, req.params.synthesisProviderId);
      return ok(null);
    },
  );

  app.post(
    `${item}/test`,
    {
      schema: {
        tags,
        security,
        summary: '测试语音合成配置：用该配置朗读一句测试语，返回首包延迟、总耗时与 16 kHz WAV 音频（base64）',
        params: synthesisProviderIdParams,
        // The console sends no body for the default voice.
        body: synthesisProviderTestRequest.nullish(),
        response: { 200: envelope(synthesisProviderTestResult), ...withTarget },
      },
    },
    async (req) =>
      ok(
        await testSynthesisProvider(db, secret, requireProject(req).id, req.params.synthesisProviderId, {
          voiceId: req.body?.voiceId,
          onUnexpected: (err) =>
            req.log.warn({ err: { name: (err as Error)?.name } }, 'synthesis provider test failed'),
        }),
      ),
  );
};
