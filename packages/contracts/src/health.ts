import { z } from 'zod';

export const healthStatus = z
  .object({
    status: z.literal('ok'),
    database: z.literal('ok'),
    databaseKind: z.enum(['pglite', 'postgres']),
    uptimeSeconds: z.number(),
    version: z.string(),
  })
  .meta({ id: 'HealthStatus' });
export type HealthStatus = z.infer<typeof healthStatus>;
