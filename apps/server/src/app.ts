import fastifyCompress from '@fastify/compress';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyReply, type FastifyServerOptions } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { DatabaseHandle } from './db/client';
import type { Clock } from './engine/clock';
import type { Env } from './env';
import { codeForStatus, statusText } from './lib/errors';
import { defaultWebDist } from './lib/paths';
import { fail } from './lib/reply';
import { createSerializerCompiler } from './lib/serializer';
import { CachedApiKeyResolver } from './modules/api-keys/api-key-resolver';
import { auditTrailPlugin } from './modules/audit/audit-trail.plugin';
import { healthRoutes } from './modules/health/health.routes';
import { modules } from './modules/index';
import { OPENDOCK_DOCUMENT_URL, SECURITY_SCHEME } from './modules/opendock/platform/openapi';
import { opendockPlatformPlugin } from './modules/opendock/platform/opendock-platform.plugin';
import { KeyRateLimiter } from './modules/opendock/platform/rate-limit';
import { apiKeyAuthPlugin } from './plugins/api-key-auth';
import { authPlugin } from './plugins/auth';
import { registerConsole } from './plugins/console';
import { registerErrorHandling } from './plugins/error-handler';
import { inputGuardPlugin } from './plugins/input-guard';
import { metricsPlugin } from './plugins/metrics';
import { projectAccessPlugin } from './plugins/project-access';
import { rateLimitCounterFor, registerRateLimits } from './plugins/rate-limits';
import { registerSecurityHeaders } from './plugins/security-headers';
import { type Providers, providersFromEnv } from './providers';
import { createRuntime, type Runtime, type RuntimeOptions } from './runtime/runtime';
import type { TrunkControl } from './runtime/trunk-control';

declare module 'fastify' {
  interface FastifyInstance {
    /** Where e-mail and SMS go: real senders, the development outbox, or a test's capture. */
    providers: Providers;
    /** The call engine of this process (runtime/runtime.ts), built before the HTTP modules. */
    runtime: Runtime;
    /** Open-API key lookups of this process (cached; evict after a change, see api-key-resolver.ts). */
    apiKeyResolver: CachedApiKeyResolver;
  }
}

// Validation messages from zod's own rules (required, too short, ...) come out in Chinese.
z.config(z.locales.zhCN());

export interface BuildAppOptions {
  database: DatabaseHandle;
  env: Env;
  logger?: FastifyServerOptions['logger'];
  version?: string;
  /** Senders to use instead of those the environment names (tests capture messages this way). */
  providers?: Partial<Providers>;
  /** The call engine's clock (tests pass a simulated one so calls take no real time). */
  clock?: Clock;
  /** Deliberate waits (the per-IP login delay); tests record them instead of waiting. */
  sleep?: (ms: number) => Promise<void>;
  /** The SIP trunks' control instead of the simulated carrier's (tests pass a scripted one). */
  trunks?: TrunkControl;
  /** SMS vendors' endpoints and background job timing (tests point them at local fake servers). */
  sms?: RuntimeOptions['sms'];
  /** The recording store's file operations (tests: a disk that is full). */
  recordingFs?: RuntimeOptions['recordingFs'];
}

/** Query parameters that carry one-time codes or reset tokens (verify_code, /forget-password links). */
const SECRET_QUERY = /([?&](?:code|token)=)[^&#]*/gi;
/** The token segment of the SMS vendors' push addresses (modules/sms/sms-push.ts). */
const SMS_PUSH_TOKEN = /(\/api\/sms-push\/[^/]+\/[^/]+\/)[^/?#]+/g;
export const redactUrl = (url: string) =>
  url.replace(SECRET_QUERY, '$1[REDACTED]').replace(SMS_PUSH_TOKEN, '$1[REDACTED]');

const baseLogger = (env: Env) => ({
  level: env.LOG_LEVEL,
  // Tokens, passwords and codes must never reach the log, even when a handler logs a request.
  redact: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token'],
  serializers: {
    req: (req: { method: string; url: string; host?: string; ip?: string }) => ({
      method: req.method,
      url: redactUrl(req.url),
      host: req.host,
      remoteAddress: req.ip,
    }),
  },
});

/** Builds the whole HTTP application without listening, so tests drive it through `inject`. */
export async function buildApp({
  database,
  env,
  logger,
  version = '0.0.0',
  providers,
  clock,
  sleep,
  trunks,
  sms,
  recordingFs,
}: BuildAppOptions) {
  const app = Fastify({
    // A caller's logger options (a test's capture stream) keep the redaction below.
    logger:
      logger === undefined || (typeof logger === 'object' && !('info' in logger))
        ? { ...baseLogger(env), ...(logger ?? {}) }
        : logger,
    trustProxy: env.TRUST_PROXY,
    bodyLimit: 1024 * 1024,
    // Start-up (onReady) includes the engine: migrations, the SIP media worker thread and the
    // VAD's WASM. On a loaded machine that passes fastify's default 10 s, which is not a hang.
    pluginTimeout: 60_000,
    requestIdHeader: 'x-request-id',
    // Host names reach 253 characters; the schema, not the router, should refuse longer ones.
    routerOptions: { maxParamLength: 300 },
    // Router-level refusals (overlong or malformed path parameters) answer in the envelope too.
    frameworkErrors: (err, _req, reply) => {
      const status = err.statusCode ?? 400;
      (reply as FastifyReply)
        .code(status)
        .send(fail(status, codeForStatus(status), statusText[status] ?? statusText[400]!));
    },
  }).withTypeProvider<ZodTypeProvider>();

  // Bodyless POSTs (e.g. the balance query) often still carry Content-Type: application/json;
  // treat an empty body as no body instead of answering "invalid JSON".
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') return done(null, undefined);
    return parseJson(req, body as string, done);
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(createSerializerCompiler({ verify: env.NODE_ENV !== 'production' }));
  registerErrorHandling(app);
  // First, so every answer carries the headers: refusals by later hooks (401, 429) included.
  await registerSecurityHeaders(app);

  await app.register(fastifyCompress, { threshold: 1024 });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: '智能语音外呼平台 API',
        description:
          '控制台与开放接口的 HTTP API。所有应答使用统一信封 { success, status, data, message, msg, error }。',
        version,
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer' },
          [SECURITY_SCHEME]: { type: 'http', scheme: 'bearer', bearerFormat: 'cp_live_…' },
        },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  const OPEN_API_DOC = '开放接口 /opendock/v1';
  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    // Two documents behind the top bar's selector: the open API (customers' developers land on
    // it) and the whole console API at /docs/json. A pasted key survives a reload for try-it-out.
    uiConfig: {
      urls: [
        { url: OPENDOCK_DOCUMENT_URL, name: OPEN_API_DOC },
        { url: '/docs/json', name: '控制台 API' },
      ],
      'urls.primaryName': OPEN_API_DOC,
      persistAuthorization: true,
      requestSnippetsEnabled: true,
    } as Record<string, unknown>,
  });

  app.decorate('providers', providersFromEnv(env, database.db, app.log, providers));
  const runtime = createRuntime({
    database,
    env,
    log: app.log,
    providers: app.providers,
    clock,
    trunks,
    sms,
    recordingFs,
  });
  app.decorate('runtime', runtime);
  // Every role serves its own metrics: a worker's calls and dialer are only visible there.
  await app.register(metricsPlugin, { metrics: runtime.metrics, token: env.METRICS_TOKEN });
  // Started once the app is ready (after migrations in main.ts) and stopped before the database
  // closes, so neither a graceful shutdown nor a test's app.close() leaves work running.
  app.addHook('onReady', async () => runtime.start());
  app.addHook('preClose', async () => runtime.stop());
  const options = { db: database.db, database, env, version, runtime, sleep };
  if (env.ROLE === 'worker') {
    // The engine's process: its health for the orchestrator, and nothing else over HTTP.
    await app.register(healthRoutes, options);
    return app;
  }
  const rateLimitCounter = rateLimitCounterFor(database);
  await registerRateLimits(app, rateLimitCounter);
  // Ahead of the membership check, whose onRequest hook queries with the path's projectId.
  await app.register(inputGuardPlugin);
  await app.register(authPlugin, { database });
  await app.register(projectAccessPlugin, { db: database.db });
  await app.register(auditTrailPlugin, { db: database.db });
  const apiKeyResolver = new CachedApiKeyResolver(database.db);
  app.decorate('apiKeyResolver', apiKeyResolver);
  app.addHook('onReady', async () => apiKeyResolver.start(database));
  app.addHook('onClose', async () => apiKeyResolver.stop());
  await app.register(apiKeyAuthPlugin, {
    resolver: apiKeyResolver,
    limiter: new KeyRateLimiter(rateLimitCounter),
  });
  await app.register(opendockPlatformPlugin, { database });
  for (const mod of modules) await app.register(mod, options);
  await registerConsole(app, env.WEB_DIST ?? defaultWebDist());
  return app;
}

export type App = Awaited<ReturnType<typeof buildApp>>;
