import {
  envelope,
  errorEnvelope,
  llmProvider,
  llmProviderIdParams,
  llmProviderList,
  llmProviderTestResult,
  llmProviderWriteRequest,
  pageQuery,
  projectIdParams,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { assertCanManage } from '../provider-profiles/provider-profiles';
import {
  createProvider,
  deleteProvider,
  getProvider,
  LLM_PROFILE,
  listProviders,
  testProvider,
  updateProvider,
} from './llm-providers.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope };
const withTarget = { ...guarded, 404: errorEnvelope };

export const llmProvidersRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env }) => {
  const tags = ['模型配置'];
  const security = [{ bearerAuth: [] }];
  // Resolved at start, so an unreadable DATA_DIR/app-secret stops the server instead of a later request.
  const secret = loadAppSecret(env);
  const base = '/api/project/:projectId/llm-providers';

  app.get(
    base,
    {
      schema: {
        tags,
        security,
        summary: '模型配置列表（API Key 只返回是否已填写与末 4 位）',
        params: projectIdParams,
        querystring: pageQuery,
        response: { 200: envelope(llmProviderList), ...guarded },
      },
    },
    async (req) => ok(await listProviders(db, requireProject(req).id, req.query)),
  );

  app.get(
    `${base}/:providerId`,
    {
      schema: {
        tags,
        security,
        summary: '模型配置详情',
        params: llmProviderIdParams,
        response: { 200: envelope(llmProvider), ...withTarget },
      },
    },
    async (req) => ok(await getProvider(db, requireProject(req).id, req.params.providerId)),
  );

  app.post(
    base,
    {
      config: { audit: { action: 'provider.changed', targetType: 'llm_provider', verb: '新增大模型' } },
      schema: {
        tags,
        security,
        summary: '新建模型配置（OpenAI 兼容接口）',
        params: projectIdParams,
        body: llmProviderWriteRequest,
        response: { 200: envelope(llmProvider), ...guarded, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManage(project, LLM_PROFILE);
      return ok(await createProvider(db, secret, project.id, req.body));
    },
  );

  app.put(
    `${base}/:providerId`,
    {
      config: {
        audit: {
          action: 'provider.changed',
          targetType: 'llm_provider',
          targetParam: 'providerId',
          verb: '修改大模型',
        },
      },
      schema: {
        tags,
        security,
        summary: '修改模型配置（不填 API Key 则保留原值）',
        params: llmProviderIdParams,
        body: llmProviderWriteRequest,
        response: { 200: envelope(llmProvider), ...withTarget, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManage(project, LLM_PROFILE);
      return ok(await updateProvider(db, secret, project.id, req.params.providerId, req.body));
    },
  );

  app.delete(
    `${base}/:providerId`,
    {
      config: {
        audit: {
          action: 'provider.changed',
          targetType: 'llm_provider',
          targetParam: 'providerId',
          verb: '删除大模型',
        },
      },
      schema: {
        tags,
        security,
        summary: '删除模型配置（仍被小助手使用时拒绝）',
        params: llmProviderIdParams,
        response: { 200: envelope(z.null()), ...withTarget, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManage(project, LLM_PROFILE);
      await deleteProvider(db, project.id, req.params.providerId);
      return ok(null);
    },
  );

  app.post(
    `${base}/:providerId/test`,
    {
      schema: {
        tags,
        security,
        summary: '测试模型配置：发送一次简短对话，返回是否成功与耗时',
        params: llmProviderIdParams,
        response: { 200: envelope(llmProviderTestResult), ...withTarget },
      },
    },
    async (req) =>
      ok(
        await testProvider(db, secret, requireProject(req).id, req.params.providerId, {
          onUnexpected: (err) =>
            req.log.warn({ err: { name: (err as Error)?.name } }, 'provider test failed'),
        }),
      ),
  );
};
