import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CallEvent } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, loginAs, seedUser, testEnv } from '../../test/helpers';
import { buildApp } from '../app';
import type { DatabaseHandle } from '../db/client';
import { calls } from '../db/schema';
import { EnvError } from '../env';
import { seedDemoContent } from '../modules/demo/demo-content';

/**
 * Process roles on one PostgreSQL: an `api` process (HTTP, no engine) and a `worker` process (the
 * engine, no console) together do what one `all` process does. Both run in this test process as
 * separate apps with their own runtimes, relays and database pools, as two servers would.
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

const until = async <T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  what: string,
  timeoutMs = 30_000,
) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

describe('process roles', () => {
  it('refuses api or worker on the embedded database, which serves one process', () => {
    expect(() => testEnv({ ROLE: 'api' })).toThrow(EnvError);
    expect(() => testEnv({ ROLE: 'worker', DATABASE_URL: 'postgres://x@127.0.0.1/db' })).not.toThrow();
  });

  it.skipIf(!onPostgres)(
    'an api and a worker process: a test call started through the API runs in the worker, its events reach the API, 挂断 crosses (PostgreSQL)',
    async () => {
      database = await createTestDatabase();
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'roles-'));
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
      expect(api.runtime.hasEngine).toBe(false);
      expect(worker.runtime.hasEngine).toBe(true);

      // The worker serves its health and nothing else over HTTP.
      expect((await worker.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      expect((await worker.inject({ method: 'POST', url: '/auth/login', payload: {} })).statusCode).toBe(404);

      const owner = await seedUser(database.db, { email: 'roles@example.com' });
      const { publishedAssistantId } = await seedDemoContent(database.db, owner.projectId, owner.userId);
      const headers = await loginAs(api, 'roles@example.com');
      const base = `/api/project/${owner.projectId}`;
      const seenByApi: CallEvent[] = [];
      const unsubscribe = api.runtime.hub.subscribe(owner.projectId, (e) => seenByApi.push(e));

      const started = await api.inject({
        method: 'POST',
        url: `${base}/calls/test`,
        headers,
        payload: { assistantId: publishedAssistantId, persona: 'interested', version: 1 },
      });
      expect(started.statusCode, started.body).toBe(200);
      const callId = started.json().data.callId as string;
      // The record exists when the API answers, written by the worker's engine.
      const [row] = await database.db.select().from(calls).where(eq(calls.id, callId));
      expect(row?.leaseOwner).toMatch(/^worker-/);
      const ended = await until(
        async () =>
          (await api.inject({ method: 'GET', url: `${base}/calls/${callId}`, headers })).json().data,
        (call) => call.status === 'ended',
        'the test call to end',
      );
      expect(ended).toMatchObject({ endReason: 'completed', direction: 'outbound' });
      // Relayed events arrive a moment after the row they announce: wait for the end's.
      const mine = await until(
        async () =>
          seenByApi.filter((e) => ('call' in e ? e.call.id : e.callId) === callId).map((e) => e.type),
        (types) => types.includes('ended'),
        "the API process to hear the call's end",
      );
      expect(mine[0]).toBe('started');
      expect(mine).toContain('turn');
      expect(mine).toContain('ended');

      // 挂断 through the API reaches the call in the worker.
      const silent = await api.inject({
        method: 'POST',
        url: `${base}/calls/test`,
        headers,
        payload: { assistantId: publishedAssistantId, persona: 'silent', version: 1 },
      });
      const silentId = silent.json().data.callId as string;
      await until(
        async () =>
          (await api.inject({ method: 'GET', url: `${base}/calls/${silentId}`, headers })).json().data,
        (call) => call.status === 'in_progress',
        'the silent call to be answered',
      );
      const hung = await api.inject({ method: 'POST', url: `${base}/calls/${silentId}/hangup`, headers });
      expect(hung.statusCode, hung.body).toBe(200);
      const cut = await until(
        async () =>
          (await api.inject({ method: 'GET', url: `${base}/calls/${silentId}`, headers })).json().data,
        (call) => call.status === 'ended',
        'the hung-up call to end',
      );
      expect(cut).toMatchObject({ endReason: 'callee_hangup', hangupBy: 'callee' });

      // 模拟来电 too: bound through the API, answered by the worker.
      await api.inject({
        method: 'POST',
        url: `${base}/numbers`,
        headers,
        payload: { number: '02161234567' },
      });
      const bound = await api.inject({
        method: 'PUT',
        url: `${base}/numbers/02161234567/inbound`,
        headers,
        payload: { assistantId: publishedAssistantId },
      });
      expect(bound.statusCode, bound.body).toBe(200);
      const inbound = await api.inject({
        method: 'POST',
        url: `${base}/calls/test-inbound`,
        headers,
        payload: { number: '02161234567', persona: 'interested' },
      });
      expect(inbound.statusCode, inbound.body).toBe(200);
      const answered = await until(
        async () =>
          (
            await api.inject({ method: 'GET', url: `${base}/calls/${inbound.json().data.callId}`, headers })
          ).json().data,
        (call) => call.status === 'ended',
        'the inbound call to end',
      );
      expect(answered).toMatchObject({ direction: 'inbound', endReason: 'completed' });
      unsubscribe();
    },
    120_000,
  );

  it.skipIf(!onPostgres)(
    'an api process without any worker answers 503 instead of waiting forever',
    async () => {
      database = await createTestDatabase();
      const api = await buildApp({
        database,
        env: testEnv({ ROLE: 'api', DATABASE_URL: process.env.TEST_DATABASE_URL as string }),
        logger: false,
      });
      apps.push(api);
      await api.ready();
      const owner = await seedUser(database.db, { email: 'alone@example.com' });
      const { publishedAssistantId } = await seedDemoContent(database.db, owner.projectId, owner.userId);
      const headers = await loginAs(api, 'alone@example.com');
      const res = await api.inject({
        method: 'POST',
        url: `/api/project/${owner.projectId}/calls/test`,
        headers,
        payload: { assistantId: publishedAssistantId, persona: 'interested', version: 1 },
      });
      expect(res.statusCode).toBe(503);
      expect(res.json().message).toBe('当前没有可用的通话引擎，请稍后重试');
      const left = await database.db.execute('select count(*)::int as n from call_requests');
      expect((left as unknown as { rows: { n: number }[] }).rows[0]?.n).toBe(0);
    },
    30_000,
  );
});
