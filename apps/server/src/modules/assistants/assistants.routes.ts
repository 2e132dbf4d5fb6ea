import {
  assistantCreateRequest,
  assistantDetail,
  assistantIdParams,
  assistantList,
  assistantListQuery,
  assistantPublishRequest,
  assistantTemplate,
  assistantVersion,
  assistantVersionParams,
  assistantWriteRequest,
  envelope,
  errorEnvelope,
  projectIdParams,
  testChatRequest,
} from '@callpilot/contracts';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { fillConfig } from '../../engine/call/fill-config';
import { ok } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { requireUser } from '../../plugins/auth';
import { requireProject } from '../../plugins/project-access';
import { embedderForProject } from '../knowledge/embedder';
import { llmAssistFor } from '../knowledge/llm-assist';
import type { ModuleOptions } from '../module-options';
import {
  copyAssistant,
  createAssistant,
  deleteAssistant,
  getAssistant,
  listAssistants,
  listVersions,
  mergeWithTemplate,
  type ProvidedFields,
  publishAssistant,
  rollbackAssistant,
  updateAssistant,
} from './assistants.service';
import { ASSISTANT_TEMPLATES } from './assistants.templates';
import { resolveCallAssistant } from './call-config';
import { providerResolver } from './provider';
import { checkMessages, testChatTurn } from './test-chat';

const failures = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };

/** What the caller sent before the contract's defaults filled the gaps (see mergeWithTemplate). */
const providedFields = new WeakMap<FastifyRequest, ProvidedFields>();
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const assistantsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env }) => {
  const tags = ['智能小助手'];
  const security = [{ bearerAuth: [] }];
  const base = '/api/project/:projectId/assistants';

  app.get(
    '/api/project/:projectId/assistant-templates',
    {
      schema: {
        tags,
        security,
        summary: '内置小助手模板',
        params: projectIdParams,
        response: { 200: envelope(z.array(assistantTemplate)), ...failures },
      },
    },
    async () => ok([...ASSISTANT_TEMPLATES]),
  );

  app.get(
    base,
    {
      schema: {
        tags,
        security,
        summary: '小助手列表（分页，按名称或描述搜索）',
        params: projectIdParams,
        querystring: assistantListQuery,
        response: { 200: envelope(assistantList), ...failures },
      },
    },
    async (req) => ok(await listAssistants(db, requireProject(req).id, req.query)),
  );

  app.post(
    base,
    {
      schema: {
        tags,
        security,
        summary: '新建小助手（可从模板开始，请求中的字段覆盖模板）',
        params: projectIdParams,
        body: assistantCreateRequest,
        response: { 200: envelope(assistantDetail), ...failures },
      },
      preValidation: async (req) => {
        const body: Record<string, unknown> = isObject(req.body) ? req.body : {};
        providedFields.set(req, {
          description: 'description' in body,
          use: 'use' in body,
          status: 'status' in body,
          configKeys: isObject(body.config) ? Object.keys(body.config) : [],
        });
      },
    },
    async (req) => {
      const { templateKey, ...draft } = req.body;
      const provided = providedFields.get(req)!;
      const merged = templateKey ? mergeWithTemplate(templateKey, draft, provided) : draft;
      const project = requireProject(req);
      return ok(await createAssistant(db, project.id, requireUser(req).id, merged, templateKey ?? null));
    },
  );

  app.get(
    `${base}/:assistantId`,
    {
      schema: {
        tags,
        security,
        summary: '小助手详情（草稿）',
        params: assistantIdParams,
        response: { 200: envelope(assistantDetail), ...failures },
      },
    },
    async (req) => ok(await getAssistant(db, requireProject(req).id, req.params.assistantId)),
  );

  app.put(
    `${base}/:assistantId`,
    {
      schema: {
        tags,
        security,
        summary: '保存草稿（发布前不影响正在使用的版本）',
        params: assistantIdParams,
        body: assistantWriteRequest,
        response: { 200: envelope(assistantDetail), ...failures },
      },
    },
    async (req) => ok(await updateAssistant(db, requireProject(req).id, req.params.assistantId, req.body)),
  );

  app.delete(
    `${base}/:assistantId`,
    {
      schema: {
        tags,
        security,
        summary: '删除小助手',
        params: assistantIdParams,
        response: { 200: envelope(z.null()), ...failures },
      },
    },
    async (req) => {
      await deleteAssistant(db, requireProject(req).id, req.params.assistantId);
      return ok(null);
    },
  );

  app.post(
    `${base}/:assistantId/copy`,
    {
      schema: {
        tags,
        security,
        summary: '复制小助手（副本未发布）',
        params: assistantIdParams,
        response: { 200: envelope(assistantDetail), ...failures },
      },
    },
    async (req) =>
      ok(await copyAssistant(db, requireProject(req).id, req.params.assistantId, requireUser(req).id)),
  );

  app.post(
    `${base}/:assistantId/publish`,
    {
      config: {
        publishes: true,
        audit: {
          action: 'assistant.published',
          targetType: 'assistant',
          targetParam: 'assistantId',
          summary: (_req, d) => `发布 ${d?.name ?? ''} v${d?.publishedVersion ?? ''}`,
        },
      },
      schema: {
        tags,
        security,
        summary: '发布：把当前草稿冻结为新版本',
        params: assistantIdParams,
        body: assistantPublishRequest.nullish(),
        response: { 200: envelope(assistantDetail), ...failures },
      },
    },
    async (req) =>
      ok(
        await publishAssistant(
          db,
          requireProject(req).id,
          req.params.assistantId,
          requireUser(req).id,
          req.body?.note ?? '',
        ),
      ),
  );

  app.get(
    `${base}/:assistantId/versions`,
    {
      schema: {
        tags,
        security,
        summary: '版本历史（最新在前）',
        params: assistantIdParams,
        response: { 200: envelope(z.array(assistantVersion)), ...failures },
      },
    },
    async (req) => ok(await listVersions(db, requireProject(req).id, req.params.assistantId)),
  );

  app.post(
    `${base}/:assistantId/versions/:version/rollback`,
    {
      config: {
        publishes: true,
        audit: {
          action: 'assistant.rolled_back',
          targetType: 'assistant',
          targetParam: 'assistantId',
          summary: (req, d) => `${d?.name ?? ''} 回滚到 v${(req.params as { version: number }).version}`,
        },
      },
      schema: {
        tags,
        security,
        summary: '回滚到某个版本（恢复到草稿并发布为新版本）',
        params: assistantVersionParams,
        response: { 200: envelope(assistantDetail), ...failures },
      },
    },
    async (req) =>
      ok(
        await rollbackAssistant(
          db,
          requireProject(req).id,
          req.params.assistantId,
          req.params.version,
          requireUser(req).id,
        ),
      ),
  );

  const resolveProvider = providerResolver(db, env);
  const secret = loadAppSecret(env);

  app.post(
    `${base}/:assistantId/test-chat`,
    {
      schema: {
        tags,
        security,
        summary: '测试对话：以客户身份发言，小助手的回复以 SSE（text/event-stream）流式返回',
        description:
          '每个事件一行 `data: <json>`，依次为 segments（检索了知识库时）、delta（回复片段）、intent、action、done；出错时为 error。',
        params: assistantIdParams,
        body: testChatRequest,
        response: failures,
      },
      config: { readOnlySafe: true },
    },
    async (req, reply) => {
      const projectId = requireProject(req).id;
      checkMessages(req.body.messages);
      // Loaded before the stream starts, so a missing assistant or version is an ordinary 404.
      const resolved = await resolveCallAssistant(
        db,
        projectId,
        req.params.assistantId,
        req.body.version ?? 'draft',
      );
      const config = fillConfig(resolved.config, req.body.variables);

      const abort = new AbortController();
      // The browser's stop button (or a closed tab) should stop paying for tokens at once.
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) abort.abort();
      });
      // Hijacked, the reply skips onSend hooks, so compression cannot hold events back.
      reply.hijack();
      reply.raw.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        'X-Accel-Buffering': 'no',
        Connection: 'keep-alive',
      });
      for await (const event of testChatTurn(db, {
        projectId,
        config,
        messages: req.body.messages,
        resolveProvider,
        embedderFor: (projectId) => embedderForProject(db, secret, projectId),
        assistFor: (projectId, assistant) =>
          assistant.brain.providerId
            ? llmAssistFor(db, secret, projectId, assistant.brain.providerId, {
                model: assistant.brain.model,
              })
            : Promise.resolve(undefined),
        signal: abort.signal,
        onError: (err) => req.log.warn({ err }, 'test chat turn failed'),
      })) {
        if (abort.signal.aborted) break;
        reply.raw.write(`data: ${JSON.stringify(event)}\n\n`);
      }
      reply.raw.end();
    },
  );
};
