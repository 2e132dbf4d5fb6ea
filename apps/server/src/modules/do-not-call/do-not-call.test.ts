import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { doNotCall } from '../../db/schema';
import { addToDoNotCall, isOnDoNotCall } from './do-not-call.service';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

async function setup() {
  current = await createTestApp();
  const { app, db } = current;
  const a = await seedUser(db, { email: 'a@example.com' });
  const b = await seedUser(db, { email: 'b@example.com' });
  return {
    ...current,
    a,
    b,
    headersA: await loginAs(app, 'a@example.com'),
    headersB: await loginAs(app, 'b@example.com'),
  };
}

describe('do-not-call list', () => {
  it('normalises numbers, lists them with partial match and removes them', async () => {
    const { app, a, headersA } = await setup();
    const url = `/api/project/${a.projectId}/do-not-call`;
    for (const phone of ['+86 138-0013-8000', '0086 139 0000 1111', '010-8888 6666']) {
      const res = await app.inject({
        method: 'POST',
        url,
        headers: headersA,
        payload: { phone, reason: '客户要求' },
      });
      expect(res.statusCode).toBe(200);
    }
    const all = (await app.inject({ method: 'GET', url, headers: headersA })).json().data;
    expect(all.total).toBe(3);
    expect(all.items.map((e: { phone: string }) => e.phone).sort()).toEqual([
      '01088886666',
      '13800138000',
      '13900001111',
    ]);
    expect(all.items[0]).toMatchObject({ source: 'manual', reason: '客户要求' });

    const found = (await app.inject({ method: 'GET', url: `${url}?phone=0013`, headers: headersA })).json()
      .data;
    expect(found.items.map((e: { phone: string }) => e.phone)).toEqual(['13800138000']);
    const paged = (
      await app.inject({ method: 'GET', url: `${url}?pageSize=2&page=2`, headers: headersA })
    ).json().data;
    expect(paged).toMatchObject({ total: 3, page: 2, pageSize: 2 });
    expect(paged.items).toHaveLength(1);

    const del = await app.inject({ method: 'DELETE', url: `${url}/+8613800138000`, headers: headersA });
    expect(del.statusCode).toBe(200);
    expect(await isOnDoNotCall(current!.db, a.projectId, '13800138000')).toBe(false);
    const again = await app.inject({ method: 'DELETE', url: `${url}/13800138000`, headers: headersA });
    expect(again.statusCode).toBe(404);
    expect(again.json().message).toBe('该号码不在免打扰名单中');
  });

  it('refuses a malformed number with a message naming the field, and stores nothing', async () => {
    const { app, db, a, headersA } = await setup();
    for (const phone of ['12345', '1380013800a', '', '+1 415 555 0100']) {
      const res = await app.inject({
        method: 'POST',
        url: `/api/project/${a.projectId}/do-not-call`,
        headers: headersA,
        payload: { phone },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toMatch(/^字段 phone：(号码格式不正确|请输入号码)$/);
    }
    expect(await db.select().from(doNotCall)).toHaveLength(0);
  });

  it('keeps the first source of a number the engine adds twice, and answers lookups in any format', async () => {
    const { db, a, b } = await setup();
    await addToDoNotCall(db, a.projectId, '+86 13800138000', 'opt_out', '通话中明确拒绝：别再打了');
    const second = await addToDoNotCall(db, a.projectId, '138 0013 8000', 'import', '导入');
    expect(second).toMatchObject({
      phone: '13800138000',
      source: 'opt_out',
      reason: '通话中明确拒绝：别再打了',
    });
    expect(await isOnDoNotCall(db, a.projectId, '0086-138-0013-8000')).toBe(true);
    expect(await isOnDoNotCall(db, b.projectId, '13800138000')).toBe(false);
  });

  it("does not let another project's member read or change this project's list", async () => {
    const { app, db, a, headersB } = await setup();
    await addToDoNotCall(db, a.projectId, '13800138000', 'manual', '');
    const url = `/api/project/${a.projectId}/do-not-call`;
    const list = await app.inject({ method: 'GET', url, headers: headersB });
    const add = await app.inject({
      method: 'POST',
      url,
      headers: headersB,
      payload: { phone: '13900001111' },
    });
    const del = await app.inject({ method: 'DELETE', url: `${url}/13800138000`, headers: headersB });
    for (const res of [list, add, del]) expect(res.statusCode).toBe(403);
    expect((await db.select().from(doNotCall)).map((r) => r.phone)).toEqual(['13800138000']);
  });
});
