import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { bearer, seedApiKey } from '../../../test/api-keys';
import { createTestDatabase, seedUser, testEnv } from '../../../test/helpers';
import { buildApp } from '../../app';
import type { DatabaseHandle } from '../../db/client';
import { callRequests, calls, doNotCall } from '../../db/schema';
import { seedDemoContent } from '../demo/demo-content';

/**
 * The open API in a deployment of several processes: an `api` process (HTTP, no engine) takes
 * POST /opendock/v1/calls, checks it, and hands the call to a `worker` process through
 * call_requests; the worker's engine runs it. Needs PostgreSQL (PGlite serves one process).
 */
const onPostgres = process.env.TEST_DB === 'pg';
let database: DatabaseHandle | undefined;
let dataDir: string | undefined;
const apps: Awaited<ReturnType<typeof buildApp>>[] = [];
afterEach(async () => {
  for (const app of apps.splice(0).reverse()) await app.close();
  await database?.close();
  database = undefined;
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

const VARIABLES = { 客户姓名: '张先生', 公司名称: '星河宽带', 产品名称: '千兆宽带套餐' };

describe('open API calls across process roles', () => {
  it.skipIf(!onPostgres)(
    'an api process checks the call and a worker process runs it (PostgreSQL)',
    async () => {
      database = await createTestDatabase();
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'open-roles-'));
      const env = (role: string) =>
        testEnv({
          ROLE: role,
          DATABASE_URL: process.env.TEST_DATABASE_URL as string,
          DATA_DIR: dataDir as string,
          SIM_TIME_SCALE: '20',
        });
      const api = await buildApp({ database, env: env('api'), logger: false });
      const worker = await buildApp({ database, env: env('worker'), logger: false });
      apps.push(api, worker);
      await api.ready();
      await worker.ready();

      const owner = await seedUser(database.db, { email: 'roles@example.com' });
      const { publishedAssistantId } = await seedDemoContent(database.db, owner.projectId, owner.userId);
      const { secret } = await seedApiKey(database.db, { projectId: owner.projectId });
      await database.db
        .insert(doNotCall)
        .values({ projectId: owner.projectId, phone: '13900139000', source: 'manual' });

      // Refused in the api process, before anything reaches the queue.
      const refused = await api.inject({
        method: 'POST',
        url: '/opendock/v1/calls',
        headers: bearer(secret),
        payload: { assistantId: publishedAssistantId, phone: '13900139000', variables: VARIABLES },
      });
      expect(refused.statusCode).toBe(409);
      expect(await database.db.select().from(callRequests)).toEqual([]);

      const placed = await api.inject({
        method: 'POST',
        url: '/opendock/v1/calls',
        headers: bearer(secret),
        payload: {
          assistantId: publishedAssistantId,
          phone: '13800138000',
          variables: VARIABLES,
          simulatedPersona: 'interested',
        },
      });
      expect(placed.statusCode, placed.body).toBe(200);
      const { callId, status } = placed.json().data;
      expect(['queued', 'ringing']).toContain(status);
      if (status === 'ringing') {
        // The record exists when the API answers, written by the worker's engine.
        const [row] = await database.db.select().from(calls).where(eq(calls.id, callId));
        expect(row?.leaseOwner).toMatch(/^worker-/);
      }

      const deadline = Date.now() + 60_000;
      let call: { status: string; endReason: string; turns: unknown[] } | undefined;
      while (Date.now() < deadline) {
        const res = await api.inject({
          method: 'GET',
          url: `/opendock/v1/calls/${callId}`,
          headers: bearer(secret),
        });
        if (res.statusCode === 200 && res.json().data.status === 'ended') {
          call = res.json().data;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(call).toMatchObject({ status: 'ended', endReason: 'completed', variables: VARIABLES });
      expect(call!.turns.length).toBeGreaterThan(2);
      expect(await database.db.select().from(callRequests)).toEqual([]);
    },
    90_000,
  );
});
