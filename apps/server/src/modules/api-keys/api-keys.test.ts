import { API_KEY_PATTERN, API_KEY_ROLL_GRACE_HOURS } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, loginAs, seedUser, testEnv } from '../../../test/helpers';
import { buildApp } from '../../app';
import type { DatabaseHandle } from '../../db/client';
import { apiKeys } from '../../db/schema';
import { API_KEY_ON_CONSOLE } from '../../plugins/auth';
import { hashToken } from '../auth/sessions.service';
import { bearer, opendockApp, seedApiKey, type TestApp } from '../opendock/platform/opendock.test-helper';

let current: TestApp | undefined;
const extraApps: Awaited<ReturnType<typeof buildApp>>[] = [];
let sharedDatabase: DatabaseHandle | undefined;
afterEach(async () => {
  vi.useRealTimers();
  for (const app of extraApps.splice(0)) await app.close();
  await current?.app.close();
  current = undefined;
  await sharedDatabase?.close();
  sharedDatabase = undefined;
});

async function setup() {
  const t = await opendockApp();
  current = t;
  return t;
}

const keysUrl = (projectId: string) => `/api/project/${projectId}/api-keys`;
const createBody = {
  name: 'CRM 同步',
  scopes: { calls: 'write', records: 'read' },
  ipAllowlist: [],
  rateLimitPerMinute: 120,
};

async function createKey(app: TestApp['app'], projectId: string, headers: Record<string, string>, body = {}) {
  const res = await app.inject({
    method: 'POST',
    url: keysUrl(projectId),
    headers,
    payload: { ...createBody, ...body },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { key: { id: string; maskedKey: string; status: string }; secret: string };
}

describe('API keys (console)', () => {
  it('shows the secret once, stores only its hash, and the key works on /opendock/v1/me', async () => {
    const { app, db, a, ownerA } = await setup();
    const created = await createKey(app, a.projectId, ownerA);
    expect(created.secret).toMatch(API_KEY_PATTERN);
    expect(created.key).toMatchObject({
      name: 'CRM 同步',
      maskedKey: `cp_live_••••${created.secret.slice(-4)}`,
      last4: created.secret.slice(-4),
      status: 'active',
      scopes: { calls: 'write', records: 'read' },
      rateLimitPerMinute: 120,
      createdBy: { name: 'owner-a' },
      lastUsedAt: null,
      revokedAt: null,
    });

    const list = await app.inject({ method: 'GET', url: keysUrl(a.projectId), headers: ownerA });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((k: { id: string }) => k.id)).toEqual([created.key.id]);
    expect(list.body).not.toContain(created.secret);
    expect(list.body).not.toContain(created.secret.slice(8, -4));

    const [row] = await db.select().from(apiKeys).where(eq(apiKeys.id, created.key.id));
    expect(row!.keyHash).toBe(hashToken(created.secret));
    expect(JSON.stringify(row)).not.toContain(created.secret.slice(8));

    const me = await app.inject({ method: 'GET', url: '/opendock/v1/me', headers: bearer(created.secret) });
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json().data).toEqual({
      keyId: created.key.id,
      projectId: a.projectId,
      name: 'CRM 同步',
      scopes: { calls: 'write', records: 'read' },
      rateLimitPerMinute: 120,
    });
    const logged = await current!.logged(created.key.id);
    expect(logged).toHaveLength(1);
    const after = (await app.inject({ method: 'GET', url: keysUrl(a.projectId), headers: ownerA })).json()
      .data[0];
    expect(after.lastUsedAt).not.toBeNull();
    expect(after.lastUsedIp).toBe('127.0.0.1');
  });

  it('lets a member read the masked list but not create, edit, roll or revoke', async () => {
    const { app, db, a, ownerA, memberA } = await setup();
    const created = await createKey(app, a.projectId, ownerA);
    const list = await app.inject({ method: 'GET', url: keysUrl(a.projectId), headers: memberA });
    expect(list.statusCode).toBe(200);
    expect(list.json().data[0].maskedKey).toBe(`cp_live_••••${created.secret.slice(-4)}`);
    const logs = await app.inject({
      method: 'GET',
      url: `${keysUrl(a.projectId)}/${created.key.id}/requests`,
      headers: memberA,
    });
    expect(logs.statusCode).toBe(200);

    const before = await db.select().from(apiKeys);
    for (const [method, url, payload] of [
      ['POST', keysUrl(a.projectId), createBody],
      ['PUT', `${keysUrl(a.projectId)}/${created.key.id}`, { name: '改名' }],
      ['POST', `${keysUrl(a.projectId)}/${created.key.id}/roll`, { graceHours: 0 }],
      ['POST', `${keysUrl(a.projectId)}/${created.key.id}/revoke`, undefined],
    ] as const) {
      const res = await app.inject({ method, url, headers: memberA, payload });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json().message).toBe('仅项目所有者或管理员可以管理 API 密钥');
    }
    expect(await db.select().from(apiKeys)).toEqual(before);
    const me = await app.inject({ method: 'GET', url: '/opendock/v1/me', headers: bearer(created.secret) });
    expect(me.statusCode).toBe(200);
  });

  it('refuses a past expiry and malformed allowlist entries by name, storing nothing', async () => {
    const { app, db, a, ownerA } = await setup();
    const cases: [Record<string, unknown>, string | RegExp][] = [
      [{ expiresAt: new Date(Date.now() - 60_000).toISOString() }, '过期时间须晚于当前时间'],
      [{ ipAllowlist: ['10.0.0.0/33'] }, /「10\.0\.0\.0\/33」不是有效的 IP 地址或 CIDR 网段/],
      [{ ipAllowlist: ['300.1.1.1'] }, /「300\.1\.1\.1」/],
      [{ ipAllowlist: ['2001:db8::/129'] }, /「2001:db8::\/129」/],
      [{ ipAllowlist: ['1.2.3.4/24/8'] }, /IP 白名单|「1\.2\.3\.4\/24\/8」/],
      [{ ipAllowlist: ['example.com'] }, /IP 白名单/],
      [{ scopes: {} }, /至少选择一项资源/],
      [{ scopes: { assistants: 'write' } }, /只能设为只读/],
      [{ name: '' }, /请输入密钥名称/],
      [{ rateLimitPerMinute: 0 }, /每分钟请求上限至少为 1/],
    ];
    for (const [body, message] of cases) {
      const res = await app.inject({
        method: 'POST',
        url: keysUrl(a.projectId),
        headers: ownerA,
        payload: { ...createBody, ...body },
      });
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().message).toMatch(message);
    }
    expect(await db.select().from(apiKeys)).toHaveLength(0);
    const fine = await createKey(app, a.projectId, ownerA, {
      ipAllowlist: ['203.0.113.7', '198.51.100.0/24', '2001:db8::/32', '203.0.113.7'],
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    expect(fine.key).toMatchObject({ status: 'active' });
    const [row] = await db.select().from(apiKeys);
    expect(row!.ipAllowlist).toEqual(['203.0.113.7', '198.51.100.0/24', '2001:db8::/32']);
  });

  it('edits name, scopes, allowlist and limit in place; the key at once obeys the new scopes', async () => {
    const { app, a, ownerA } = await setup();
    const { key, secret } = await createKey(app, a.projectId, ownerA, { scopes: { calls: 'read' } });
    const read = () => app.inject({ method: 'GET', url: '/opendock/v1/test-reads', headers: bearer(secret) });
    expect((await read()).statusCode).toBe(200);
    const res = await app.inject({
      method: 'PUT',
      url: `${keysUrl(a.projectId)}/${key.id}`,
      headers: ownerA,
      payload: { name: '只读订单', scopes: { records: 'read' }, rateLimitPerMinute: 30 },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      name: '只读订单',
      scopes: { records: 'read' },
      rateLimitPerMinute: 30,
      maskedKey: key.maskedKey,
    });
    const refused = await read();
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toContain('没有「通话（发起单通外呼）」的读取权限');
    const bad = await app.inject({
      method: 'PUT',
      url: `${keysUrl(a.projectId)}/${key.id}`,
      headers: ownerA,
      payload: { ipAllowlist: ['1.2.3.999'] },
    });
    expect(bad.statusCode).toBe(400);
  });

  it('a rename keeps the allowlist and the limit it does not name', async () => {
    const { app, a, ownerA } = await setup();
    const { key } = await createKey(app, a.projectId, ownerA, { ipAllowlist: ['203.0.113.0/24'] });
    const res = await app.inject({
      method: 'PUT',
      url: `${keysUrl(a.projectId)}/${key.id}`,
      headers: ownerA,
      payload: { name: '改个名字' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      name: '改个名字',
      ipAllowlist: ['203.0.113.0/24'],
      rateLimitPerMinute: 120,
      scopes: { calls: 'write', records: 'read' },
    });
  });

  it('rolls a key: both work during the grace period, then only the new one', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { app, a, ownerA } = await setup();
    const old = await createKey(app, a.projectId, ownerA, {
      ipAllowlist: ['127.0.0.1'],
      rateLimitPerMinute: 77,
    });
    const roll = await app.inject({
      method: 'POST',
      url: `${keysUrl(a.projectId)}/${old.key.id}/roll`,
      headers: ownerA,
      payload: { graceHours: 24 },
    });
    expect(roll.statusCode, roll.body).toBe(200);
    const rolled = roll.json().data as { key: { id: string; name: string }; secret: string };
    expect(rolled.secret).toMatch(API_KEY_PATTERN);
    expect(rolled.secret).not.toBe(old.secret);
    expect(rolled.key).toMatchObject({
      name: 'CRM 同步',
      ipAllowlist: ['127.0.0.1'],
      rateLimitPerMinute: 77,
      status: 'active',
    });
    const me = (secret: string) =>
      app.inject({ method: 'GET', url: '/opendock/v1/me', headers: bearer(secret) });
    expect((await me(old.secret)).statusCode).toBe(200);
    expect((await me(rolled.secret)).statusCode).toBe(200);
    const list = (await app.inject({ method: 'GET', url: keysUrl(a.projectId), headers: ownerA })).json()
      .data;
    const listedOld = list.find((k: { id: string }) => k.id === old.key.id);
    expect(listedOld).toMatchObject({ status: 'rolling', rolledToId: rolled.key.id });
    expect(Date.parse(listedOld.expiresAt) - Date.now()).toBeCloseTo(24 * 3600_000, -4);

    const again = await app.inject({
      method: 'POST',
      url: `${keysUrl(a.projectId)}/${old.key.id}/roll`,
      headers: ownerA,
      payload: {},
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe('该 API 密钥已轮换过，请轮换新密钥');

    vi.setSystemTime(Date.now() + 24 * 3600_000 + 1000);
    const late = await me(old.secret);
    expect(late.statusCode).toBe(401);
    expect(late.json().message).toBe('API 密钥已过期');
    expect((await me(rolled.secret)).statusCode).toBe(200);
  });

  it('rolls with no grace: the old key fails at once', async () => {
    const { app, a, ownerA } = await setup();
    const old = await createKey(app, a.projectId, ownerA);
    const me = (secret: string) =>
      app.inject({ method: 'GET', url: '/opendock/v1/me', headers: bearer(secret) });
    expect((await me(old.secret)).statusCode).toBe(200);
    const roll = await app.inject({
      method: 'POST',
      url: `${keysUrl(a.projectId)}/${old.key.id}/roll`,
      headers: ownerA,
      payload: { graceHours: 0 },
    });
    expect(roll.statusCode).toBe(200);
    const refused = await me(old.secret);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().message).toBe('API 密钥已吊销');
    expect((await me(roll.json().data.secret)).statusCode).toBe(200);
    const bad = await app.inject({
      method: 'POST',
      url: `${keysUrl(a.projectId)}/${roll.json().data.key.id}/roll`,
      headers: ownerA,
      payload: { graceHours: 5 },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain(`宽限期须为 ${API_KEY_ROLL_GRACE_HOURS.join('、')} 小时之一`);
  });

  it('revokes at once and lists usable keys first, revoked last, old stopped keys not at all', async () => {
    const { app, db, a, ownerA } = await setup();
    const first = await createKey(app, a.projectId, ownerA, { name: '一' });
    const second = await createKey(app, a.projectId, ownerA, { name: '二' });
    const third = await createKey(app, a.projectId, ownerA, { name: '三' });
    const me = (secret: string) =>
      app.inject({ method: 'GET', url: '/opendock/v1/me', headers: bearer(secret) });
    expect((await me(second.secret)).statusCode).toBe(200);
    const revoke = await app.inject({
      method: 'POST',
      url: `${keysUrl(a.projectId)}/${second.key.id}/revoke`,
      headers: ownerA,
    });
    expect(revoke.statusCode).toBe(200);
    expect(revoke.json().data).toMatchObject({ status: 'revoked' });
    const refused = await me(second.secret);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().message).toBe('API 密钥已吊销');

    await db
      .update(apiKeys)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(apiKeys.id, first.key.id));
    const list = (await app.inject({ method: 'GET', url: keysUrl(a.projectId), headers: ownerA })).json()
      .data;
    expect(list.map((k: { name: string; status: string }) => `${k.name}:${k.status}`)).toEqual([
      '三:active',
      '一:expired',
      '二:revoked',
    ]);

    await db
      .update(apiKeys)
      .set({ revokedAt: new Date(Date.now() - 31 * 86_400_000) })
      .where(eq(apiKeys.id, second.key.id));
    const later = (await app.inject({ method: 'GET', url: keysUrl(a.projectId), headers: ownerA })).json()
      .data;
    expect(later.map((k: { name: string }) => k.name)).toEqual(['三', '一']);
    expect(third.key.status).toBe('active');
  });

  it('keeps tenants apart: an owner of B cannot list, change or read the log of A’s keys', async () => {
    const { app, db, a, b, ownerA, ownerB } = await setup();
    const keyA = await createKey(app, a.projectId, ownerA);
    const before = await db.select().from(apiKeys);
    const urlA = `${keysUrl(a.projectId)}/${keyA.key.id}`;
    for (const [method, url, payload] of [
      ['GET', keysUrl(a.projectId), undefined],
      ['POST', keysUrl(a.projectId), createBody],
      ['PUT', urlA, { name: '偷改' }],
      ['POST', `${urlA}/roll`, { graceHours: 0 }],
      ['POST', `${urlA}/revoke`, undefined],
      ['GET', `${urlA}/requests`, undefined],
    ] as const) {
      const res = await app.inject({ method, url, headers: ownerB, payload });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json().message).toBe('无权访问该项目');
    }
    // A's key id under B's own project: not found, not changed.
    const urlInB = `${keysUrl(b.projectId)}/${keyA.key.id}`;
    for (const [method, url, payload] of [
      ['PUT', urlInB, { name: '偷改' }],
      ['POST', `${urlInB}/roll`, { graceHours: 0 }],
      ['POST', `${urlInB}/revoke`, undefined],
      ['GET', `${urlInB}/requests`, undefined],
    ] as const) {
      const res = await app.inject({ method, url, headers: ownerB, payload });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().message).toBe('API 密钥不存在');
    }
    const listB = await app.inject({ method: 'GET', url: keysUrl(b.projectId), headers: ownerB });
    expect(listB.json().data).toEqual([]);
    expect(await db.select().from(apiKeys)).toEqual(before);
  });

  it('refuses API keys on console routes and console sessions on /opendock', async () => {
    const { app, db, a, ownerA } = await setup();
    const { secret } = await seedApiKey(db, { projectId: a.projectId });
    const console = await app.inject({ method: 'GET', url: keysUrl(a.projectId), headers: bearer(secret) });
    expect(console.statusCode).toBe(401);
    expect(console.json().message).toBe(API_KEY_ON_CONSOLE);
    const open = await app.inject({ method: 'GET', url: '/opendock/v1/me', headers: ownerA });
    expect(open.statusCode).toBe(401);
    expect(open.json().message).toBe('开放接口只接受 API 密钥，控制台登录令牌不能用于 /opendock');
  });
});

describe('API key revocation across processes', () => {
  it('stops a revoked key in another process within a second, not after the cache TTL', async () => {
    sharedDatabase = await createTestDatabase();
    const apps = [];
    for (let i = 0; i < 2; i++) {
      const app = await buildApp({ database: sharedDatabase, env: testEnv(), logger: false });
      await app.ready();
      extraApps.push(app);
      apps.push(app);
    }
    const [one, two] = apps as [(typeof apps)[0], (typeof apps)[0]];
    const { projectId } = await seedUser(sharedDatabase.db, { email: 'two-processes@example.com' });
    const owner = await loginAs(one, 'two-processes@example.com');
    const created = await one.inject({
      method: 'POST',
      url: keysUrl(projectId),
      headers: owner,
      payload: createBody,
    });
    const { key, secret } = created.json().data;
    // Process two has the key cached (the TTL alone would keep it working for 30 s).
    expect(
      (await two.inject({ method: 'GET', url: '/opendock/v1/me', headers: bearer(secret) })).statusCode,
    ).toBe(200);
    const revoked = await one.inject({
      method: 'POST',
      url: `${keysUrl(projectId)}/${key.id}/revoke`,
      headers: owner,
    });
    expect(revoked.statusCode).toBe(200);
    const start = Date.now();
    let status = 200;
    while (Date.now() - start < 1000) {
      status = (await two.inject({ method: 'GET', url: '/opendock/v1/me', headers: bearer(secret) }))
        .statusCode;
      if (status === 401) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(401);
  });
});
