import {
  API_KEY_PATTERN,
  API_KEY_RESOURCE_LABELS,
  type ApiKeyResource,
  type ApiKeyScopes,
  scopeAllows,
} from '@callpilot/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, forbidden, unauthorized } from '../lib/errors';
import { hashToken } from '../modules/auth/sessions.service';
import { applyRateLimit, type KeyRateLimiter } from '../modules/opendock/platform/rate-limit';
import { bearerToken } from './auth';

/** Every open-API route lives under this prefix; the key implies the project. */
export const OPENDOCK_PREFIX = '/opendock/v1';

/** A key as a request sees it once checked. */
export interface ApiKeyContext {
  id: string;
  projectId: string;
  name: string;
  scopes: ApiKeyScopes;
  rateLimitPerMinute: number;
}

/** A stored key as the check needs it (see modules/api-keys for the store behind it). */
export interface ResolvedApiKey extends ApiKeyContext {
  ipAllowlist: string[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  projectDisabled: boolean;
}

/** Where keys are looked up: by the SHA-256 of the whole key (cached and revoked by the store). */
export interface ApiKeyResolver {
  resolve(keyHash: string): Promise<ResolvedApiKey | null>;
  /** Whether `ip` passes the key's allowlist (empty allowlist: every address). */
  ipAllowed(key: ResolvedApiKey, ip: string): boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on every /opendock/v1 route once the key is checked. */
    apiKey: ApiKeyContext | null;
    /**
     * The stored key the bearer named, set as soon as it is found, even when the request is then
     * refused (revoked, expired, address, scope, rate limit): the key's request log shows those too.
     */
    presentedApiKey: { id: string; projectId: string } | null;
  }
  interface FastifyContextConfig {
    /**
     * The scope an open-API route needs. Every route under /opendock/v1 must name one or be
     * `public` (its OpenAPI document): a route that forgets answers 403, it never opens up.
     */
    apiScope?: { resource: ApiKeyResource; access: 'read' | 'write' };
    /** Any live key of the project may call it, whatever its scopes (GET /opendock/v1/me). */
    anyScope?: boolean;
    public?: boolean;
  }
}

export const apiKeyMessages = {
  missing: '缺少 API 密钥：请在请求头中携带 Authorization: Bearer <API 密钥>',
  session: '开放接口只接受 API 密钥，控制台登录令牌不能用于 /opendock',
  invalid: 'API 密钥无效',
  revoked: 'API 密钥已吊销',
  expired: 'API 密钥已过期',
  ip: (ip: string) => `来源 IP ${ip} 不在该 API 密钥的 IP 白名单中`,
  scope: (resource: ApiKeyResource, access: 'read' | 'write') =>
    `该 API 密钥没有「${API_KEY_RESOURCE_LABELS[resource]}」的${access === 'read' ? '读取' : '写入'}权限`,
  undeclared: '该接口未声明所需权限，已拒绝',
  projectDisabled: '项目已停用',
} as const;

/**
 * Guards every route under /opendock/v1 by its path (as project-access guards /api/project/...),
 * so an open-API route added later is covered without opting in: the bearer must be an API key
 * (a console session token is refused), live (not revoked, not past its expiry or roll grace),
 * from an allowed address, of an enabled project, within its rate limit, with the route's scope.
 * Every answer to an admitted caller, a scope 403 included, carries the key's RateLimit headers.
 */
export const apiKeyAuthPlugin = fp(
  async (
    app: FastifyInstance,
    { resolver, limiter }: { resolver: ApiKeyResolver; limiter: KeyRateLimiter },
  ) => {
    app.decorateRequest('apiKey', null);
    app.decorateRequest('presentedApiKey', null);
    app.addHook('onRequest', async (req, reply) => {
      const url = req.routeOptions.url;
      if (!url?.startsWith(`${OPENDOCK_PREFIX}/`) || req.routeOptions.config.public) return;
      const token = bearerToken(req);
      if (!token) throw unauthorized(apiKeyMessages.missing);
      if (!API_KEY_PATTERN.test(token)) throw unauthorized(apiKeyMessages.session);
      const key = await resolver.resolve(hashToken(token));
      if (!key) throw unauthorized(apiKeyMessages.invalid);
      req.presentedApiKey = { id: key.id, projectId: key.projectId };
      if (key.revokedAt) throw unauthorized(apiKeyMessages.revoked);
      if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) throw unauthorized(apiKeyMessages.expired);
      if (!resolver.ipAllowed(key, req.ip)) throw forbidden(apiKeyMessages.ip(req.ip));
      if (key.projectDisabled) throw new AppError(403, 'PROJECT_DISABLED', apiKeyMessages.projectDisabled);
      // Counted only for callers the key admits: a leaked key used from a refused address must
      // not spend the owner's limit.
      applyRateLimit(reply, await limiter.take(key.id, key.rateLimitPerMinute));
      req.apiKey = {
        id: key.id,
        projectId: key.projectId,
        name: key.name,
        scopes: key.scopes,
        rateLimitPerMinute: key.rateLimitPerMinute,
      };
      const { anyScope, apiScope: scope } = req.routeOptions.config;
      if (anyScope) return;
      if (!scope) throw forbidden(apiKeyMessages.undeclared);
      if (!scopeAllows(key.scopes, scope.resource, scope.access)) {
        throw forbidden(apiKeyMessages.scope(scope.resource, scope.access));
      }
    });
  },
  { name: 'api-key-auth' },
);

/** For open-API handlers: the checked key (the hook answered 401/403 otherwise). */
export const requireApiKey = (req: FastifyRequest): ApiKeyContext => {
  if (!req.apiKey) throw unauthorized(apiKeyMessages.invalid);
  return req.apiKey;
};
