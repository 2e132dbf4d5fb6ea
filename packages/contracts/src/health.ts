import { z } from 'zod';

export const healthStatus = z
  .object({
    /**
     * `degraded`: the process serves and calls go on, but something the operator must fix is
     * failing (recordings cannot be written). Still HTTP 200: restarting the process or taking it
     * out of the load balancer frees no disk space.
     */
    status: z.enum(['ok', 'degraded']),
    database: z.literal('ok'),
    databaseKind: z.enum(['pglite', 'postgres']),
    /** Whether this process's last recording write got through; 磁盘已满 until one does again. */
    recordings: z.object({
      ok: z.boolean(),
      reason: z.string().nullable(),
      since: z.iso.datetime().nullable(),
    }),
    uptimeSeconds: z.number(),
    version: z.string(),
    /**
     * The demo project's background history (calls, tasks, recordings), produced after a first
     * start: `producing` while it takes CPU, so wait for `ready` before measuring the server.
     */
    demoHistory: z.enum(['off', 'producing', 'ready', 'failed']),
  })
  .meta({ id: 'HealthStatus' });
export type HealthStatus = z.infer<typeof healthStatus>;
