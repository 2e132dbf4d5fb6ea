import { gunzipSync } from 'node:zlib';
import { and, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { doNotCall, idempotencyKeys } from '../../../db/schema';
import { ok } from '../../../lib/reply';
import { bearer, opendockApp, seedApiKey, type TestApp } from './opendock.test-helper';

let current: TestApp | undefined;
afterEach(async () => {
  current?.release();
  await current?.app.close();
  current = undefined;
});

async function setup() {
  const t = await opendockApp();
  current = t;
  const key = await seedApiKey(t.db, { projectId: t.a.projectId });
  const post = (url: string, idempotencyKey: string | undefined, payload?: unknown, secret = key.secret) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: {
        ...bearer(secret),
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  return { ...t, key, post };
}

describe('Idempotency-Key on open-API POSTs', () => {
  it('replays the first answer verbatim without doing the work again', async () => {
    const { db, a, post } = await setup();
    const first = await post('/opendock/v1/test-writes', 'order-1001', { phone: '13800138000' });
    expect(first.statusCode).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const second = await post('/opendock/v1/test-writes', 'order-1001', { phone: '13800138000' });
    expect(second.statusCode).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
    expect(second.headers['content-type']).toBe(first.headers['content-type']);
    expect(await db.select().from(doNotCall).where(eq(doNotCall.projectId, a.projectId))).toHaveLength(1);

    // Without the header (or with another key) the request runs as usual.
    const other = await post('/opendock/v1/test-writes', 'order-1002', { phone: '13900139000' });
    expect(other.json().data.rows).toBe(2);
  });

  it('refuses the same key with a different body (422) and while the first still runs (409)', async () => {
    const { app, post, release, waiting } = await setup();
    await post('/opendock/v1/test-writes', 'k-1', { phone: '13800138000' });
    const different = await post('/opendock/v1/test-writes', 'k-1', { phone: '13800138001' });
    expect(different.statusCode).toBe(422);
    expect(different.json().message).toBe('Idempotency-Key 已用于另一个请求内容不同的请求');
    const otherPath = await post('/opendock/v1/test-slow', 'k-1');
    expect(otherPath.statusCode).toBe(422);

    const slow = post('/opendock/v1/test-slow', 'k-slow');
    while (waiting() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const meanwhile = await post('/opendock/v1/test-slow', 'k-slow');
    expect(meanwhile.statusCode).toBe(409);
    expect(meanwhile.json().message).toBe('相同 Idempotency-Key 的请求正在处理中，请稍后重试');
    release();
    expect((await slow).statusCode).toBe(200);
    const replay = await post('/opendock/v1/test-slow', 'k-slow');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(waiting()).toBe(0);
    expect(app).toBeDefined();
  });

  it('stores 4xx answers of the handler, not 5xx ones: a retry after a 500 runs again', async () => {
    const { post } = await setup();
    const refused = await post('/opendock/v1/test-writes', 'refused', { phone: '10000000000' });
    expect(refused.statusCode).toBe(400);
    const refusedAgain = await post('/opendock/v1/test-writes', 'refused', { phone: '10000000000' });
    expect(refusedAgain.statusCode).toBe(400);
    expect(refusedAgain.headers['idempotent-replayed']).toBe('true');
    expect(refusedAgain.body).toBe(refused.body);

    const failed = await post('/opendock/v1/test-fails', 'retry-me');
    expect(failed.statusCode).toBe(500);
    const retried = await post('/opendock/v1/test-fails', 'retry-me');
    expect(retried.statusCode).toBe(200);
    expect(retried.json().data.attempt).toBe(2);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    const replayed = await post('/opendock/v1/test-fails', 'retry-me');
    expect(replayed.json().data.attempt).toBe(2);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
  });

  it('does not store a request its schema refuses, so the corrected request may reuse the key', async () => {
    const { post } = await setup();
    const bad = await post('/opendock/v1/test-writes', 'fix-me', { phone: 'abc' });
    expect(bad.statusCode).toBe(400);
    const fixed = await post('/opendock/v1/test-writes', 'fix-me', { phone: '13800138000' });
    expect(fixed.statusCode).toBe(200);
  });

  it('keeps answers for 24 hours, per project', async () => {
    const { db, a, b, post } = await setup();
    await post('/opendock/v1/test-writes', 'daily', { phone: '13800138000' });
    // The same key string from another project is another key.
    const keyB = await seedApiKey(db, { projectId: b.projectId });
    const inB = await post('/opendock/v1/test-writes', 'daily', { phone: '13800138000' }, keyB.secret);
    expect(inB.statusCode).toBe(200);
    expect(inB.headers['idempotent-replayed']).toBeUndefined();

    await db
      .update(idempotencyKeys)
      .set({ createdAt: new Date(Date.now() - 24 * 3600_000 - 1000) })
      .where(and(eq(idempotencyKeys.projectId, a.projectId), eq(idempotencyKeys.key, 'daily')));
    const afterADay = await post('/opendock/v1/test-writes', 'daily', { phone: '13900139000' });
    expect(afterADay.statusCode).toBe(200);
    expect(afterADay.headers['idempotent-replayed']).toBeUndefined();
    expect(afterADay.json().data.rows).toBe(2);
  });

  it('refuses a malformed Idempotency-Key with 400 and does nothing', async () => {
    const { db, post } = await setup();
    for (const bad of ['', 'x'.repeat(256), '中文键', 'tab\there']) {
      const res = await post('/opendock/v1/test-writes', bad, { phone: '13800138000' });
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().message).toBe('Idempotency-Key 须为 1 到 255 个可打印 ASCII 字符');
    }
    expect(await db.select().from(doNotCall)).toHaveLength(0);
    expect(await db.select().from(idempotencyKeys)).toHaveLength(0);
  });

  it('stores the JSON answer, not the compressed bytes, and replays it compressed or not', async () => {
    const t = await opendockApp({
      routes: (app) =>
        app.post(
          '/opendock/v1/test-large',
          { config: { apiScope: { resource: 'calls', access: 'write' } } },
          async () => ok({ text: '长'.repeat(4000), at: Date.now() }),
        ),
    });
    current = t;
    const { secret } = await seedApiKey(t.db, { projectId: t.a.projectId });
    const send = (encoding: string) =>
      t.app.inject({
        method: 'POST',
        url: '/opendock/v1/test-large',
        headers: { ...bearer(secret), 'idempotency-key': 'big', 'accept-encoding': encoding },
      });
    const first = await send('gzip');
    expect(first.headers['content-encoding']).toBe('gzip');
    const plain = await send('identity');
    expect(plain.headers['idempotent-replayed']).toBe('true');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(gunzipSync(first.rawPayload).toString('utf8'));
    const zipped = await send('gzip');
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(zipped.rawPayload).toString('utf8')).toBe(plain.body);
  });

  it('takes over a key whose first request was abandoned by a dead process', async () => {
    const { db, a, post } = await setup();
    await db.insert(idempotencyKeys).values({
      projectId: a.projectId,
      key: 'orphan',
      requestHash: 'whatever',
      createdAt: new Date(Date.now() - 6 * 60_000),
    });
    const res = await post('/opendock/v1/test-writes', 'orphan', { phone: '13800138000' });
    expect(res.statusCode).toBe(200);
  });
});
