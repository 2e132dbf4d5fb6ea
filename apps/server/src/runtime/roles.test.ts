import dgram from 'node:dgram';
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

      // The flow editor's 模拟来电 as well: its draft runs in the worker, with the script.
      const flow = await api.inject({
        method: 'POST',
        url: `${base}/flows`,
        headers,
        payload: { name: '热线' },
      });
      const flowId = flow.json().data.id as string;
      const draft = await api.inject({
        method: 'PUT',
        url: `${base}/flows/${flowId}/draft`,
        headers,
        payload: {
          graph: {
            nodes: [
              { id: 'start', type: 'start' },
              { id: 'ask', type: 'collect', data: { prompt: '请输入工号。', maxDigits: 4 } },
              { id: 'bye', type: 'hangup', data: { text: '工号{{digits_input}}，再见。' } },
            ],
            edges: [
              { id: 'e1', source: 'start', sourceHandle: 'next', target: 'ask' },
              { id: 'e2', source: 'ask', sourceHandle: 'next', target: 'bye' },
            ],
          },
        },
      });
      expect(draft.statusCode, draft.body).toBe(200);
      const flowCall = await api.inject({
        method: 'POST',
        url: `${base}/flows/${flowId}/test-call`,
        headers,
        payload: { script: ['8001'] },
      });
      expect(flowCall.statusCode, flowCall.body).toBe(200);
      const [flowRow] = await database.db
        .select()
        .from(calls)
        .where(eq(calls.id, flowCall.json().data.callId));
      expect(flowRow?.leaseOwner).toMatch(/^worker-/);
      const tested = await until(
        async () =>
          (
            await api.inject({ method: 'GET', url: `${base}/calls/${flowCall.json().data.callId}`, headers })
          ).json().data,
        (call) => call.status === 'ended',
        'the flow test call to end',
      );
      expect(tested.flow).toMatchObject({ flowId, flowVersion: null });
      expect(tested.turns.map((turn: { text: string }) => turn.text)).toContain('工号8001，再见。');
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

  it.skipIf(!onPostgres)(
    'TELEPHONY=sip behind an api process: a trunk added through the API registers from the worker, and the API shows it (PostgreSQL)',
    async () => {
      database = await createTestDatabase();
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'roles-sip-'));
      // A registrar that accepts every REGISTER: enough to see the worker's registration arrive.
      const registrar = dgram.createSocket('udp4');
      const registers: string[] = [];
      registrar.on('message', (datagram, rinfo) => {
        const text = datagram.toString('utf8');
        if (!text.startsWith('REGISTER ')) return;
        registers.push(text);
        const head = text.split('\r\n\r\n')[0]!.split('\r\n').slice(1);
        const pick = (name: string) =>
          head.filter((h) => h.toLowerCase().startsWith(`${name.toLowerCase()}:`));
        const reply = [
          'SIP/2.0 200 OK',
          ...pick('Via'),
          ...pick('From'),
          `${pick('To')[0]};tag=reg`,
          ...pick('Call-ID'),
          ...pick('CSeq'),
          `${pick('Contact')[0]};expires=300`,
          'Content-Length: 0',
          '',
          '',
        ].join('\r\n');
        registrar.send(reply, rinfo.port, rinfo.address);
      });
      await new Promise<void>((resolve) => registrar.bind(0, '127.0.0.1', () => resolve()));
      const registrarPort = (registrar.address() as { port: number }).port;
      try {
        const sipPort = 17000 + 2 * Math.floor(Math.random() * 1000);
        const rtp = 46000 + 2 * Math.floor(Math.random() * 2000);
        const base = {
          DATABASE_URL: process.env.TEST_DATABASE_URL as string,
          DATA_DIR: dataDir,
          TELEPHONY: 'sip',
        };
        const api = await buildApp({ database, env: testEnv({ ...base, ROLE: 'api' }), logger: false });
        const worker = await buildApp({
          database,
          env: testEnv({
            ...base,
            ROLE: 'worker',
            SIP_PORT: String(sipPort),
            SIP_HOST: '127.0.0.1',
            RTP_PORT_MIN: String(rtp),
            RTP_PORT_MAX: String(rtp + 9),
          }),
          logger: false,
        });
        apps.push(api, worker);
        await api.ready();
        await worker.ready();
        const owner = await seedUser(database.db, { email: 'sip-roles@example.com' });
        const headers = await loginAs(api, 'sip-roles@example.com');
        const url = `/api/project/${owner.projectId}/trunks`;
        const created = await api.inject({
          method: 'POST',
          url,
          headers,
          payload: {
            name: '电信中继',
            kind: 'register',
            registrar: `127.0.0.1:${registrarPort}`,
            username: '02160881000',
            password: 'trunk-pass-1234',
          },
        });
        expect(created.statusCode, created.body).toBe(200);
        const trunkId = created.json().data.id as string;
        // The API process runs no lines but does not claim the server is simulated.
        expect(created.json().data.status.state).not.toBe('sip_off');
        const status = await until(
          async () =>
            (await api.inject({ method: 'GET', url: `${url}/${trunkId}/status`, headers })).json().data,
          (value) => value.state === 'registered',
          'the worker to register the trunk added through the API',
          45_000,
        );
        expect(status.state).toBe('registered');
        expect(registers.some((r) => r.includes('sip:02160881000@127.0.0.1'))).toBe(true);
        // 测试呼叫 needs the engine: the API process says where to run it.
        const test = await api.inject({
          method: 'POST',
          url: `${url}/${trunkId}/test-call`,
          headers,
          payload: { number: '13800000000' },
        });
        expect(test.statusCode).toBe(409);
        expect(test.json().msg ?? test.json().message).toContain('通话引擎');
        // Stopped while the registrar still answers: the worker's unREGISTER at shutdown would
        // otherwise wait out its transaction timeout (32 s) for a registrar that is gone.
        for (const app of apps.splice(0).reverse()) await app.close();
      } finally {
        registrar.close();
      }
    },
    120_000,
  );
});
