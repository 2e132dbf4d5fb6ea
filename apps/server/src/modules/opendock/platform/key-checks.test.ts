import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { projects } from '../../../db/schema';
import { bearer, opendockApp, seedApiKey, type TestApp } from './opendock.test-helper';

let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

async function setup() {
  const t = await opendockApp();
  current = t;
  return t;
}

describe('open API key checks', () => {
  it('refuses a key past its expiry with 401 and accepts one before it', async () => {
    const { app, db, a } = await setup();
    const live = await seedApiKey(db, { projectId: a.projectId, expiresAt: new Date(Date.now() + 60_000) });
    const dead = await seedApiKey(db, { projectId: a.projectId, expiresAt: new Date(Date.now() - 1) });
    expect((await app.inject({ url: '/opendock/v1/me', headers: bearer(live.secret) })).statusCode).toBe(200);
    const res = await app.inject({ url: '/opendock/v1/me', headers: bearer(dead.secret) });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ success: false, code: 'UNAUTHORIZED', message: 'API 密钥已过期' });
  });

  it('admits only addresses of the allowlist: single IPv4, CIDR, IPv6 and IPv4-mapped IPv6', async () => {
    const { app, db, a } = await setup();
    const { secret } = await seedApiKey(db, {
      projectId: a.projectId,
      ipAllowlist: ['203.0.113.7', '198.51.100.0/24', '2001:db8:abcd::/48'],
    });
    const from = (remoteAddress: string) =>
      app.inject({ url: '/opendock/v1/me', headers: bearer(secret), remoteAddress });
    for (const ip of [
      '203.0.113.7',
      '198.51.100.1',
      '198.51.100.254',
      '2001:db8:abcd:12::1',
      '::ffff:203.0.113.7',
    ]) {
      expect((await from(ip)).statusCode, ip).toBe(200);
    }
    for (const ip of ['203.0.113.8', '198.51.101.1', '2001:db8:abce::1', '127.0.0.1', '::1']) {
      const res = await from(ip);
      expect(res.statusCode, ip).toBe(403);
      expect(res.json().message).toBe(`来源 IP ${ip} 不在该 API 密钥的 IP 白名单中`);
    }
  });

  it('checks each route’s scope: read vs write, undeclared routes closed, /me open to any scope', async () => {
    const { app, db, a } = await setup();
    const reader = await seedApiKey(db, {
      projectId: a.projectId,
      scopes: { calls: 'read', do_not_call: 'read' },
    });
    const writer = await seedApiKey(db, { projectId: a.projectId, scopes: { do_not_call: 'write' } });
    const reads = await app.inject({ url: '/opendock/v1/test-reads', headers: bearer(reader.secret) });
    expect(reads.statusCode).toBe(200);
    const noRead = await app.inject({ url: '/opendock/v1/test-reads', headers: bearer(writer.secret) });
    expect(noRead.statusCode).toBe(403);
    expect(noRead.json().message).toBe('该 API 密钥没有「通话（发起单通外呼）」的读取权限');
    const noWrite = await app.inject({
      method: 'POST',
      url: '/opendock/v1/test-writes',
      headers: bearer(reader.secret),
      payload: { phone: '13800138000' },
    });
    expect(noWrite.statusCode).toBe(403);
    expect(noWrite.json().message).toBe('该 API 密钥没有「免打扰名单」的写入权限');
    const undeclared = await app.inject({
      url: '/opendock/v1/test-undeclared',
      headers: bearer(writer.secret),
    });
    expect(undeclared.statusCode).toBe(403);
    expect(undeclared.json().message).toBe('该接口未声明所需权限，已拒绝');
    for (const key of [reader, writer]) {
      expect((await app.inject({ url: '/opendock/v1/me', headers: bearer(key.secret) })).statusCode).toBe(
        200,
      );
    }
  });

  it('answers 401 without a key, with a bogus one, and 403 for a disabled project', async () => {
    const { app, db, a } = await setup();
    const none = await app.inject({ url: '/opendock/v1/me' });
    expect(none.statusCode).toBe(401);
    expect(none.json().message).toContain('缺少 API 密钥');
    const bogus = await app.inject({ url: '/opendock/v1/me', headers: bearer(`cp_live_${'x'.repeat(43)}`) });
    expect(bogus.statusCode).toBe(401);
    expect(bogus.json().message).toBe('API 密钥无效');
    const { secret } = await seedApiKey(db, { projectId: a.projectId });
    await db.update(projects).set({ disabled: true }).where(eq(projects.id, a.projectId));
    const disabled = await app.inject({ url: '/opendock/v1/me', headers: bearer(secret) });
    expect(disabled.statusCode).toBe(403);
    expect(disabled.json().code).toBe('PROJECT_DISABLED');
  });

  it('never lets a key of one project act on another: the key alone names the project', async () => {
    const { app, db, a, b } = await setup();
    const keyA = await seedApiKey(db, { projectId: a.projectId });
    const keyB = await seedApiKey(db, { projectId: b.projectId });
    const meA = await app.inject({ url: '/opendock/v1/me', headers: bearer(keyA.secret) });
    expect(meA.json().data.projectId).toBe(a.projectId);
    const write = await app.inject({
      method: 'POST',
      url: '/opendock/v1/test-writes',
      headers: { ...bearer(keyB.secret), 'x-project-id': a.projectId },
      payload: { phone: '13800138000' },
    });
    expect(write.json().data.rows).toBe(1);
    const again = await app.inject({
      method: 'POST',
      url: '/opendock/v1/test-writes',
      headers: bearer(keyA.secret),
      payload: { phone: '13800138000' },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data.rows).toBe(1);
  });
});
