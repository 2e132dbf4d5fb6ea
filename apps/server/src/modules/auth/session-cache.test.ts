import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, testEnv } from '../../../test/helpers';
import { buildApp } from '../../app';
import type { DatabaseHandle } from '../../db/client';
import { projects } from '../../db/schema';
import { ensureDemo } from '../demo/demo.service';
import {
  type CachedProject,
  revokedProject,
  revokedToken,
  revokedUser,
  SessionCache,
  UserProjectsCache,
} from './session-cache';
import type { SessionUser } from './sessions.service';

const user = (tokenHash: string, id = 'u1'): SessionUser => ({
  id,
  email: `${id}@example.com`,
  displayName: id,
  profile: '',
  tokenHash,
  expiresAt: new Date(Date.now() + 86_400_000),
});

describe('SessionCache', () => {
  it('forgets an entry after its TTL or its session expiry, whichever is first', () => {
    const cache = new SessionCache(1000);
    cache.set(user('a'), new Date(10_000_000), 0);
    expect(cache.get('a', 999)?.id).toBe('u1');
    expect(cache.get('a', 1000)).toBeUndefined();
    cache.set(user('b'), new Date(500), 0);
    expect(cache.get('b', 499)).toBeDefined();
    expect(cache.get('b', 500)).toBeUndefined();
  });

  it('revokes one token or every token of a user', () => {
    const cache = new SessionCache();
    cache.set(user('a', 'u1'), new Date(Date.now() + 60_000));
    cache.set(user('b', 'u1'), new Date(Date.now() + 60_000));
    cache.set(user('c', 'u2'), new Date(Date.now() + 60_000));
    cache.revoke(revokedToken('a'));
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeDefined();
    cache.revoke(revokedUser('u1'));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('c')).toBeDefined();
  });

  it('drops the oldest entry when full', () => {
    const cache = new SessionCache(60_000, 2);
    const until = new Date(Date.now() + 60_000);
    cache.set(user('a'), until);
    cache.set(user('b'), until);
    cache.set(user('c'), until);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
  });
});

describe('revocation across server processes', () => {
  let database: DatabaseHandle | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  /** Two apps on one database stand for two API processes behind a load balancer; logged in on the first. */
  async function twoProcessesLoggedIn() {
    database = await createTestDatabase();
    await ensureDemo(database.db, { email: 'demo@example.com', password: 'demo-pass-1' });
    const a = await buildApp({ database, env: testEnv(), logger: false });
    const b = await buildApp({ database, env: testEnv(), logger: false });
    await Promise.all([a.ready(), b.ready()]);
    const login = await a.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'demo@example.com', password: 'demo-pass-1' },
    });
    return { a, b, headers: { authorization: `Bearer ${login.json().data.token}` } };
  }

  it('a logout in one process ends the session in another that had it cached', async () => {
    const { a, b, headers } = await twoProcessesLoggedIn();
    try {
      expect((await b.inject({ method: 'GET', url: '/api/user/current', headers })).statusCode).toBe(200);

      expect((await a.inject({ method: 'GET', url: '/auth/logout', headers })).statusCode).toBe(200);
      await expect
        .poll(async () => (await b.inject({ method: 'GET', url: '/api/user/current', headers })).statusCode, {
          timeout: 5000,
          interval: 50,
        })
        .toBe(401);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a project registered or disabled elsewhere shows in the next current-user answer', async () => {
    const { a, b, headers } = await twoProcessesLoggedIn();
    try {
      const projectsOf = async (app: typeof a) =>
        (await app.inject({ method: 'GET', url: '/api/user/current', headers })).json().data.projects as {
          name: string;
          disabled: boolean;
        }[];
      expect(await projectsOf(b)).toHaveLength(1);

      const created = await a.inject({
        method: 'PUT',
        url: '/api/project/register',
        headers,
        payload: { name: '第二个项目', company: '示例公司', industry: '教育' },
      });
      expect(created.statusCode).toBe(200);
      await expect
        .poll(async () => (await projectsOf(b)).map((p) => p.name), { timeout: 5000 })
        .toContain('第二个项目');

      // An operator disables it (the admin CLI writes, then notifies).
      const id = created.json().data.id as string;
      await database!.db.update(projects).set({ disabled: true }).where(eq(projects.id, id));
      await database!.notify('session_revoked', revokedProject(id));
      await expect
        .poll(async () => (await projectsOf(b)).find((p) => p.name === '第二个项目')?.disabled, {
          timeout: 5000,
        })
        .toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('UserProjectsCache', () => {
  const project = (id: string): CachedProject => ({
    id,
    name: id,
    company: '',
    industry: '',
    disabled: false,
    role: 'owner',
  });

  it('expires, and is revoked by user or by any project it holds', () => {
    const cache = new UserProjectsCache(1000);
    cache.set('u1', [project('p1'), project('p2')], 0);
    cache.set('u2', [project('p3')], 0);
    expect(cache.get('u1', 999)).toHaveLength(2);
    expect(cache.get('u1', 1000)).toBeUndefined();
    cache.set('u1', [project('p1'), project('p2')], 0);
    cache.revoke(revokedProject('p2'));
    expect(cache.get('u1', 1)).toBeUndefined();
    expect(cache.get('u2', 1)).toHaveLength(1);
    cache.revoke(revokedUser('u2'));
    expect(cache.get('u2', 1)).toBeUndefined();
  });
});
