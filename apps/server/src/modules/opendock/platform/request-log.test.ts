import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, seedUser, testEnv } from '../../../../test/helpers';
import { buildApp } from '../../../app';
import type { Database, DatabaseHandle } from '../../../db/client';
import { apiKeyRequests, apiKeys, idempotencyKeys } from '../../../db/schema';
import { bearer, opendockApp, seedApiKey, type TestApp } from './opendock.test-helper';
import { RequestLogWriter } from './request-log';
import { sweepOpendockRetention } from './retention';

let current: TestApp | undefined;
let database: DatabaseHandle | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
  await database?.close();
  database = undefined;
});

describe('open API request log', () => {
  it('logs every request of a known key, refusals included, and shows it in the console', async () => {
    const t = await opendockApp();
    current = t;
    const { app, db, a, ownerA } = t;
    const key = await seedApiKey(db, {
      projectId: a.projectId,
      rateLimitPerMinute: 3,
      scopes: { sms: 'read' },
    });
    const sent: [string, number][] = [
      ['/opendock/v1/me?verbose=1', 200],
      ['/opendock/v1/test-reads', 403],
      ['/opendock/v1/me', 200],
      ['/opendock/v1/me', 429],
    ];
    for (const [url, status] of sent) {
      expect((await app.inject({ url, headers: bearer(key.secret) })).statusCode).toBe(status);
    }
    // Nothing known about the caller: nothing to log against.
    await app.inject({ url: '/opendock/v1/me' });

    const res = await app.inject({
      url: `/api/project/${a.projectId}/api-keys/${key.id}/requests`,
      headers: ownerA,
    });
    expect(res.statusCode, res.body).toBe(200);
    const log = res.json().data;
    expect(log.total).toBe(4);
    // Newest first; requests within the same millisecond may come in either order.
    const seen = log.items.map((e: { path: string; status: number }) => `${e.path} ${e.status}`);
    expect([...seen].sort()).toEqual(
      [
        '/opendock/v1/me 429',
        '/opendock/v1/me 200',
        '/opendock/v1/test-reads 403',
        '/opendock/v1/me 200',
      ].sort(),
    );
    const times = log.items.map((e: { at: string }) => Date.parse(e.at));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    for (const entry of log.items) {
      expect(entry).toMatchObject({ method: 'GET', ip: '127.0.0.1' });
      expect(Number.isInteger(entry.latencyMs) && entry.latencyMs >= 0).toBe(true);
      expect(Date.now() - Date.parse(entry.at)).toBeLessThan(60_000);
    }
    const errors = await app.inject({
      url: `/api/project/${a.projectId}/api-keys/${key.id}/requests?status=error&pageSize=1`,
      headers: ownerA,
    });
    expect(errors.json().data).toMatchObject({ total: 2, pageSize: 1 });
    expect([403, 429]).toContain(errors.json().data.items[0].status);

    const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, key.id));
    expect(row!.lastUsedIp).toBe('127.0.0.1');
    expect(row!.lastUsedAt!.getTime()).toBe(Math.max(...times));
  });

  it('writes rows in batches of 500, one INSERT and one UPDATE each, never one per request', async () => {
    const statements: string[] = [];
    const fakeDb = {
      execute: vi.fn(async (query: { queryChunks: unknown[] }) => {
        statements.push(JSON.stringify(query.queryChunks).includes('INSERT') ? 'insert' : 'update');
      }),
    } as unknown as Database;
    const writer = new RequestLogWriter(fakeDb, { warn: () => {} } as never, 60_000, 500);
    for (let i = 0; i < 499; i++) {
      writer.record({
        keyId: `k${i % 3}`,
        projectId: 'p',
        at: new Date(),
        method: 'GET',
        path: '/opendock/v1/me',
        status: 200,
        latencyMs: 1,
        ip: '127.0.0.1',
      });
    }
    expect(statements).toEqual([]);
    for (let i = 0; i < 701; i++) {
      writer.record({
        keyId: 'k0',
        projectId: 'p',
        at: new Date(),
        method: 'GET',
        path: '/opendock/v1/me',
        status: 200,
        latencyMs: 1,
        ip: '127.0.0.1',
      });
    }
    await writer.stop();
    expect(statements).toEqual(['insert', 'update', 'insert', 'update', 'insert', 'update']);
  });

  it('writes what waits when the app closes', async () => {
    database = await createTestDatabase();
    const app = await buildApp({ database, env: testEnv(), logger: false });
    await app.ready();
    const { projectId } = await seedUser(database.db, { email: 'close@example.com' });
    const key = await seedApiKey(database.db, { projectId });
    for (let i = 0; i < 3; i++) await app.inject({ url: '/opendock/v1/me', headers: bearer(key.secret) });
    await app.close();
    expect(await database.db.select().from(apiKeyRequests)).toHaveLength(3);
  });

  it('sweeps request rows after 30 days and idempotent answers after 24 hours', async () => {
    const t = await opendockApp();
    current = t;
    const { db, a } = t;
    const key = await seedApiKey(db, { projectId: a.projectId });
    const now = Date.now();
    const row = (ageMs: number, path: string) => ({
      id: randomUUID(),
      keyId: key.id,
      projectId: a.projectId,
      at: new Date(now - ageMs),
      method: 'GET',
      path,
      status: 200,
      latencyMs: 3,
      ip: '127.0.0.1',
    });
    const day = 86_400_000;
    await db.insert(apiKeyRequests).values([row(31 * day, '/old'), row(29 * day, '/recent')]);
    await db.insert(idempotencyKeys).values([
      {
        projectId: a.projectId,
        key: 'old',
        requestHash: 'h',
        status: 200,
        createdAt: new Date(now - 25 * 3600_000),
      },
      {
        projectId: a.projectId,
        key: 'new',
        requestHash: 'h',
        status: 200,
        createdAt: new Date(now - 3600_000),
      },
    ]);
    await sweepOpendockRetention(db, new Date(now));
    expect((await db.select().from(apiKeyRequests)).map((r) => r.path)).toEqual(['/recent']);
    expect((await db.select().from(idempotencyKeys)).map((r) => r.key)).toEqual(['new']);
  });
});
