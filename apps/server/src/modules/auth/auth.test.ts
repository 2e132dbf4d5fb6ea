import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp } from '../../../test/helpers';
import type { Database } from '../../db/client';
import { memberships, projects, sessions, users } from '../../db/schema';
import { hashPassword } from './password';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

async function seedUser(db: Database, email: string, password: string, projectName: string) {
  const userId = randomUUID();
  const projectId = randomUUID();
  await db
    .insert(users)
    .values({ id: userId, email, passwordHash: await hashPassword(password), displayName: email });
  await db.insert(projects).values({ id: projectId, name: projectName });
  await db.insert(memberships).values({ projectId, userId, role: 'owner' });
  return { userId, projectId };
}

describe('login, current user, logout', () => {
  it('logs in, reads the current user with the project, and logs out', async () => {
    current = await createTestApp();
    const { app, db } = current;
    const { projectId } = await seedUser(db, 'li.lei@example.com', 'correct horse', '华东外呼项目');

    const login = await app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'Li.Lei@Example.com', password: 'correct horse' },
    });
    expect(login.statusCode).toBe(200);
    const { token, expiresAt } = login.json().data;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const days = (Date.parse(expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThanOrEqual(7);

    // Only a hash of the token is stored.
    const stored = await db.select().from(sessions);
    expect(stored).toHaveLength(1);
    expect(stored[0]!.tokenHash).not.toContain(token);

    const me = await app.inject({
      method: 'GET',
      url: '/api/user/current',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(me.statusCode).toBe(200);
    expect(me.json().data).toMatchObject({
      isOwnerOrAdmin: true,
      email: 'li.lei@example.com',
      projects: [{ id: projectId, name: '华东外呼项目', disabled: false, role: 'owner' }],
    });

    const out = await app.inject({
      method: 'GET',
      url: '/auth/logout',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(out.statusCode).toBe(200);
    const after = await app.inject({
      method: 'GET',
      url: '/api/profile',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(after.statusCode).toBe(401);
    expect(after.json()).toMatchObject({
      success: false,
      code: 'UNAUTHORIZED',
      message: '未登录或登录已过期',
    });
  });

  it('gives one answer for a wrong password and an unknown e-mail', async () => {
    current = await createTestApp();
    const { app, db } = current;
    await seedUser(db, 'han.meimei@example.com', 'right password', 'P');
    for (const payload of [
      { email: 'han.meimei@example.com', password: 'wrong password' },
      { email: 'nobody@example.com', password: 'right password' },
    ]) {
      const res = await app.inject({ method: 'POST', url: '/auth/login', payload });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({
        success: false,
        code: 'INVALID_CREDENTIALS',
        message: '账号或密码错误',
      });
    }
    expect(await db.select().from(sessions)).toHaveLength(0);
  });

  it('names the bad field in Chinese and stores nothing', async () => {
    current = await createTestApp();
    const { app, db } = current;
    const res = await app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'x', password: '' },
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe('VALIDATION_FAILED');
    expect(body.message).toContain('字段 email：邮箱格式不正确');
    expect(body.message).toContain('字段 password：请输入密码');
    expect(await db.select().from(sessions)).toHaveLength(0);
  });

  it('rejects a missing, malformed or unknown token', async () => {
    current = await createTestApp();
    const { app } = current;
    for (const authorization of [undefined, 'Basic abc', 'Bearer not-a-real-token']) {
      const res = await app.inject({
        method: 'GET',
        url: '/api/user/current',
        headers: authorization ? { authorization } : {},
      });
      expect(res.statusCode).toBe(401);
    }
  });

  it('shows a user only their own projects', async () => {
    current = await createTestApp();
    const { app, db } = current;
    await seedUser(db, 'a@example.com', 'password-a', '甲公司项目');
    await seedUser(db, 'b@example.com', 'password-b', '乙公司项目');
    const login = await app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'b@example.com', password: 'password-b' },
    });
    const me = await app.inject({
      method: 'GET',
      url: '/api/user/current',
      headers: { authorization: `Bearer ${login.json().data.token}` },
    });
    expect(me.json().data.projects.map((p: { name: string }) => p.name)).toEqual(['乙公司项目']);
  });
});
