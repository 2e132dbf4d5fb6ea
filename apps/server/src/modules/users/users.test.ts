import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, PASSWORD, seedUser } from '../../../test/helpers';
import { sessions, users } from '../../db/schema';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('sign-up, project registration and token refresh', () => {
  it('registers, logs in without a project, registers projects, keeps the first current', async () => {
    current = await createTestApp();
    const { app, db } = current;
    const reg = await app.inject({
      method: 'POST',
      url: '/auth/register',
      payload: { email: 'New@Example.com', password: 'sign-up-pass-1', displayName: '  张三  ' },
    });
    expect(reg.statusCode).toBe(200);
    const headers = bearer(reg.json().data.token);
    const me = await app.inject({ method: 'GET', url: '/api/user/current', headers });
    expect(me.json().data).toMatchObject({
      email: 'new@example.com',
      displayName: '张三',
      isOwnerOrAdmin: false,
      projects: [],
    });

    const again = await app.inject({
      method: 'POST',
      url: '/auth/register',
      payload: { email: 'new@example.com', password: 'other-pass-1', displayName: '李四' },
    });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'CONFLICT', message: '该邮箱已注册' });
    expect(await db.select().from(users)).toHaveLength(1);

    const first = await app.inject({
      method: 'PUT',
      url: '/api/project/register',
      headers,
      payload: { name: '华北外呼', company: '某某科技有限公司', industry: '教育培训' },
    });
    expect(first.statusCode).toBe(200);
    expect(first.json().data).toMatchObject({ name: '华北外呼', role: 'owner', disabled: false });
    const second = await app.inject({
      method: 'PUT',
      url: '/api/project/register',
      headers,
      payload: { name: '华南外呼', company: '某某科技有限公司', industry: '教育培训' },
    });
    expect(second.statusCode).toBe(200);
    const after = (await app.inject({ method: 'GET', url: '/api/profile', headers })).json().data;
    expect(after.isOwnerOrAdmin).toBe(true);
    expect(after.projects.map((p: { name: string }) => p.name)).toEqual(['华北外呼', '华南外呼']);
    const limits = await app.inject({
      method: 'GET',
      url: `/api/project/${first.json().data.id}/balance-limit`,
      headers,
    });
    expect(limits.json().data).toEqual({
      assistantLimit: 0,
      knowledgeLimit: 0,
      ttsCloneLimit: 0,
      hasBalance: false,
      concurrentCallin: 0,
      concurrentCallout: 0,
    });
    expect((await app.inject({ method: 'PUT', url: '/api/project/register', payload: {} })).statusCode).toBe(
      401,
    );
  });

  it('rotates the token on refresh: the old one stops working at once', async () => {
    current = await createTestApp();
    const { app, db } = current;
    await seedUser(db, { email: 'r@example.com', project: null });
    const old = await loginAs(app, 'r@example.com');
    // Warm the per-process cache, so the test proves the cache is evicted too.
    expect((await app.inject({ method: 'GET', url: '/api/user/current', headers: old })).statusCode).toBe(
      200,
    );
    const res = await app.inject({ method: 'POST', url: '/auth/refresh-token', headers: old });
    expect(res.statusCode).toBe(200);
    const fresh = bearer(res.json().data.token);
    expect(fresh.authorization).not.toBe(old.authorization);
    expect((await app.inject({ method: 'GET', url: '/api/user/current', headers: old })).statusCode).toBe(
      401,
    );
    expect((await app.inject({ method: 'GET', url: '/api/user/current', headers: fresh })).statusCode).toBe(
      200,
    );
    expect(await db.select().from(sessions)).toHaveLength(1);
    expect((await app.inject({ method: 'POST', url: '/auth/refresh-token', headers: old })).statusCode).toBe(
      401,
    );
  });
});

describe('profile and password', () => {
  it('updates display name and profile, visible at once', async () => {
    current = await createTestApp();
    const { app, db } = current;
    await seedUser(db, { email: 'p@example.com' });
    const headers = await loginAs(app, 'p@example.com');
    await app.inject({ method: 'GET', url: '/api/profile', headers });
    const res = await app.inject({
      method: 'PUT',
      url: '/api/profile',
      headers,
      payload: { displayName: '王五 🎧', profile: '负责华东区外呼' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ displayName: '王五 🎧', profile: '负责华东区外呼' });
    const read = await app.inject({ method: 'GET', url: '/api/profile', headers });
    expect(read.json().data).toMatchObject({ displayName: '王五 🎧', profile: '负责华东区外呼' });

    const long = await app.inject({
      method: 'PUT',
      url: '/api/profile',
      headers,
      payload: { displayName: 'x'.repeat(51), profile: '' },
    });
    expect(long.statusCode).toBe(400);
    expect(long.json().message).toContain('字段 displayName：昵称不能超过 50 个字符');
  });

  it('changes the password with the old one and ends only the other sessions', async () => {
    current = await createTestApp();
    const { app, db } = current;
    await seedUser(db, { email: 'c@example.com', project: null });
    const here = await loginAs(app, 'c@example.com');
    const there = await loginAs(app, 'c@example.com');
    await app.inject({ method: 'GET', url: '/api/profile', headers: there });

    const wrong = await app.inject({
      method: 'PUT',
      url: '/api/user/password',
      headers: here,
      payload: { oldPassword: 'not-it-123', password: 'changed-pass-2' },
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().message).toBe('字段 oldPassword：当前密码不正确');

    const res = await app.inject({
      method: 'PUT',
      url: '/api/user/password',
      headers: here,
      payload: { oldPassword: PASSWORD, password: 'changed-pass-2' },
    });
    expect(res.statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/api/profile', headers: here })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/api/profile', headers: there })).statusCode).toBe(401);
    await loginAs(app, 'c@example.com', 'changed-pass-2');
  });

  it('locks guessing of the current password like failed logins', async () => {
    current = await createTestApp();
    const { app, db } = current;
    await seedUser(db, { email: 'd@example.com', project: null });
    const headers = await loginAs(app, 'd@example.com');
    const guess = () =>
      app.inject({
        method: 'PUT',
        url: '/api/user/password',
        headers,
        payload: { oldPassword: 'guess-123', password: 'changed-pass-2' },
      });
    for (let i = 0; i < 5; i++) expect((await guess()).statusCode).toBe(400);
    const locked = await guess();
    expect(locked.statusCode).toBe(429);
    expect(locked.json().message).toMatch(/^登录失败次数过多，请在 \d{2}:\d{2} 后重试$/);
    const login = await app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'd@example.com', password: PASSWORD },
    });
    expect(login.statusCode).toBe(429);
  });
});
