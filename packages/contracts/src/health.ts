import { z } from 'zod';

export const healthStatus = z
  .object({
    status: z.literal('ok'),
    database: z.literal('ok'),
    databaseKind: z.enum(['pglite', 'postgres']),
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
