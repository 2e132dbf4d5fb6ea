import fastifyCompress from '@fastify/compress';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyServerOptions } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { DatabaseHandle } from './db/client';
import type { Env } from './env';
import { defaultWebDist } from './lib/paths';
import { modules } from './modules/index';
import { authPlugin } from './plugins/auth';
import { registerConsole } from './plugins/console';
import { registerErrorHandling } from './plugins/error-handler';

// Validation messages from zod's own rules (required, too short, ...) come out in Chinese.
z.config(z.locales.zhCN());

export interface BuildAppOptions {
  database: DatabaseHandle;
  env: Env;
  logger?: FastifyServerOptions['logger'];
  version?: string;
}

/** Builds the whole HTTP application without listening, so tests drive it through `inject`. */
export async function buildApp({ database, env, logger, version = '0.0.0' }: BuildAppOptions) {
  const app = Fastify({
    logger: logger ?? {
      level: env.LOG_LEVEL,
      // Tokens and passwords must never reach the log, even when a handler logs a request.
      redact: ['req.headers.authorization', 'req.headers.cookie', '*.password', '*.token'],
    },
    trustProxy: env.TRUST_PROXY,
    bodyLimit: 1024 * 1024,
    requestIdHeader: 'x-request-id',
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app);

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
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      },
    },
    transform: jsonSchemaTransform,
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(fastifySwaggerUi, { routePrefix: '/docs' });

  await app.register(authPlugin, { database });
  for (const mod of modules) {
    await app.register(mod, { db: database.db, database, env, version });
  }
  await registerConsole(app, env.WEB_DIST ?? defaultWebDist());
  return app;
}

export type App = Awaited<ReturnType<typeof buildApp>>;
