import { envelope, errorEnvelope, healthStatus } from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { fail, ok } from '../../lib/reply';
import type { ModuleOptions } from '../module-options';

const startedAt = Date.now();

export const healthRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (
  app,
  { database, version, runtime },
) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['运维'],
        summary: '健康检查：进程、数据库与录音存储是否可用',
        response: { 200: envelope(healthStatus), 503: errorEnvelope },
      },
      logLevel: 'warn',
    },
    async (_req, reply) => {
      const reachable = await database.ping().then(
        () => true,
        () => false,
      );
      if (!reachable) return reply.code(503).send(fail(503, 'SERVICE_UNAVAILABLE', '数据库不可用'));
      const recordings = runtime.recordings.health();
      return ok({
        status: recordings.ok ? ('ok' as const) : ('degraded' as const),
        database: 'ok' as const,
        databaseKind: database.kind,
        recordings,
        uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
        version,
        demoHistory: runtime.demoHistory,
      });
    },
  );
};
