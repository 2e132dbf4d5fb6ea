import {
  apiKey,
  apiKeyCreated,
  apiKeyCreateRequest,
  apiKeyRequestLog,
  apiKeyRequestLogQuery,
  apiKeyRollRequest,
  apiKeyUpdateRequest,
  entityId,
  envelope,
  errorEnvelope,
  projectIdParams,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { requireUser } from '../../plugins/auth';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { API_KEY_CHANGED_CHANNEL } from './api-key-resolver';
import {
  createApiKey,
  listApiKeys,
  listKeyRequests,
  requireKeyManager,
  revokeApiKey,
  rollApiKey,
  updateApiKey,
} from './api-keys.service';

const failures = {
  400: errorEnvelope,
  401: errorEnvelope,
  403: errorEnvelope,
  404: errorEnvelope,
  409: errorEnvelope,
};
const keyParams = projectIdParams.extend({ keyId: entityId('密钥 ID') });

/**
 * 开发者选项 → API 密钥. Any member may read the (masked) list and the request logs; owners and
 * admins create, edit, roll and revoke. Every change that can stop or narrow a key is announced
 * to all processes at once (their key caches drop it), not left to the cache's TTL.
 */
export const apiKeysRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, database }) => {
  const tags = ['开发者选项'];
  const security = [{ bearerAuth: [] }];
  const announce = async (keyHash: string) => {
    app.apiKeyResolver.evict(keyHash);
    await database.notify(API_KEY_CHANGED_CHANNEL, keyHash);
  };

  app.get(
    '/api/project/:projectId/api-keys',
    {
      schema: {
        tags,
        security,
        summary: 'API 密钥列表（仅显示末四位；可用的在前，已过期、已吊销的在后）',
        params: projectIdParams,
        response: { 200: envelope(z.array(apiKey)), ...failures },
      },
    },
    async (req) => ok(await listApiKeys(db, requireProject(req).id)),
  );

  app.post(
    '/api/project/:projectId/api-keys',
    {
      config: {
        audit: { action: 'api_key.created', targetType: 'api_key', verb: '创建', subject: (d) => d?.key },
      },
      schema: {
        tags,
        security,
        summary: '创建 API 密钥（完整密钥只在此应答中出现一次）',
        params: projectIdParams,
        body: apiKeyCreateRequest,
        response: { 200: envelope(apiKeyCreated), ...failures },
      },
    },
    async (req) => {
      const project = requireProject(req);
      requireKeyManager(project);
      return ok(await createApiKey(db, project.id, requireUser(req).id, req.body));
    },
  );

  app.put(
    '/api/project/:projectId/api-keys/:keyId',
    {
      schema: {
        tags,
        security,
        summary: '修改 API 密钥的名称、权限、IP 白名单或频率上限',
        params: keyParams,
        body: apiKeyUpdateRequest,
        response: { 200: envelope(apiKey), ...failures },
      },
    },
    async (req) => {
      const project = requireProject(req);
      requireKeyManager(project);
      const { key, keyHash } = await updateApiKey(db, project.id, req.params.keyId, req.body);
      await announce(keyHash);
      return ok(key);
    },
  );

  app.post(
    '/api/project/:projectId/api-keys/:keyId/roll',
    {
      config: {
        audit: {
          action: 'api_key.created',
          targetType: 'api_key',
          targetParam: 'keyId',
          verb: '轮换密钥',
          subject: (d) => d?.key,
        },
      },
      schema: {
        tags,
        security,
        summary: '轮换 API 密钥：返回新密钥（只显示一次），旧密钥在宽限期内仍可用',
        params: keyParams,
        // A bodyless roll takes the default grace (24 h).
        body: apiKeyRollRequest.prefault({}),
        response: { 200: envelope(apiKeyCreated), ...failures },
      },
    },
    async (req) => {
      const project = requireProject(req);
      requireKeyManager(project);
      const { created, oldKeyHash } = await rollApiKey(
        db,
        project.id,
        req.params.keyId,
        requireUser(req).id,
        req.body.graceHours,
      );
      await announce(oldKeyHash);
      return ok(created);
    },
  );

  app.post(
    '/api/project/:projectId/api-keys/:keyId/revoke',
    {
      config: {
        audit: { action: 'api_key.revoked', targetType: 'api_key', targetParam: 'keyId', verb: '删除' },
      },
      schema: {
        tags,
        security,
        summary: '吊销 API 密钥（所有服务进程立即停止接受）',
        params: keyParams,
        response: { 200: envelope(apiKey), ...failures },
      },
    },
    async (req) => {
      const project = requireProject(req);
      requireKeyManager(project);
      const { key, keyHash } = await revokeApiKey(db, project.id, req.params.keyId, requireUser(req).id);
      await announce(keyHash);
      return ok(key);
    },
  );

  app.get(
    '/api/project/:projectId/api-keys/:keyId/requests',
    {
      schema: {
        tags,
        security,
        summary: 'API 密钥的请求日志（近 30 天，最新的在前）',
        params: keyParams,
        querystring: apiKeyRequestLogQuery,
        response: { 200: envelope(apiKeyRequestLog), ...failures },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      // This process's waiting rows first, so a request just made is already listed here.
      await app.opendockRequestLog.flush();
      return ok(await listKeyRequests(db, projectId, req.params.keyId, req.query));
    },
  );
};
