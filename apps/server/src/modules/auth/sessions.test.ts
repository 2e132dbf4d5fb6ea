import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, PASSWORD, seedUser } from '../../../test/helpers';
import { auditLog, sessions } from '../../db/schema';
import { describeDevice } from './user-agent';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

const CHROME_WINDOWS =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1';

async function login(app: TestApp['app'], email: string, userAgent: string, ip: string) {
  const res = await app.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email, password: PASSWORD },
    headers: { 'user-agent': userAgent },
    remoteAddress: ip,
  });
  return { authorization: `Bearer ${res.json().data.token as string}` };
}

describe('device names', () => {
  it('reads browser and system from common user agents', () => {
    expect(describeDevice(CHROME_WINDOWS)).toBe('Chrome 120 · Windows');
    expect(describeDevice(SAFARI_IPHONE)).toBe('Safari 17 · iPhone');
    expect(
      describeDevice(
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.2210.91',
      ),
    ).toBe('Edge 120 · macOS');
    expect(describeDevice('')).toBe('未知设备');
  });
});

describe('login sessions', () => {
  it('lists the user’s own live sessions with device, IP and the current one first', async () => {
    current = await createTestApp();
    const { app, db } = current;
    await seedUser(db, { email: 's@example.com', project: null });
    await seedUser(db, { email: 't@example.com', project: null });
    await login(app, 's@example.com', SAFARI_IPHONE, '198.51.100.2');
    const desk = await login(app, 's@example.com', CHROME_WINDOWS, '198.51.100.1');
    await login(app, 't@example.com', CHROME_WINDOWS, '198.51.100.9');

    const res = await app.inject({ method: 'GET', url: '/api/user/sessions', headers: desk });
    expect(res.statusCode).toBe(200);
    const list = res.json().data as { id: string; device: string; ip: string; current: boolean }[];
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({ device: 'Chrome 120 · Windows', ip: '198.51.100.1', current: true });
    expect(list[1]).toMatchObject({ device: 'Safari 17 · iPhone', ip: '198.51.100.2', current: false });
    for (const s of list) expect(s.id).toMatch(/^[0-9a-f]{16}$/);
    // The public id is a prefix of the hash, never the hash (which would be the cache key of the token).
    const hashes = (await db.select().from(sessions)).map((s) => s.tokenHash);
    expect(hashes).not.toContain(list[0]!.id);
  });

  it('ending another session makes its token fail at once and is on record; ending this one logs out', async () => {
    current = await createTestApp();
    const { app, db } = current;
    await seedUser(db, { email: 's@example.com', project: null });
    const phone = await login(app, 's@example.com', SAFARI_IPHONE, '198.51.100.2');
    const desk = await login(app, 's@example.com', CHROME_WINDOWS, '198.51.100.1');
    // The phone's session is in this process's cache now: ending it must evict it, not wait out the TTL.
    expect((await app.inject({ method: 'GET', url: '/api/user/current', headers: phone })).statusCode).toBe(
      200,
    );

    const list = (await app.inject({ method: 'GET', url: '/api/user/sessions', headers: desk })).json().data;
    const phoneId = list.find((s: { current: boolean }) => !s.current).id;
    const end = await app.inject({ method: 'DELETE', url: `/api/user/sessions/${phoneId}`, headers: desk });
    expect(end.statusCode).toBe(200);
    expect(end.json().data).toEqual({ current: false });
    expect((await app.inject({ method: 'GET', url: '/api/user/current', headers: phone })).statusCode).toBe(
      401,
    );
    expect((await app.inject({ method: 'GET', url: '/api/user/current', headers: desk })).statusCode).toBe(
      200,
    );

    const [entry] = await db.select().from(auditLog).where(eq(auditLog.action, 'auth.session_ended'));
    expect(entry).toMatchObject({
      actor: 's@example.com',
      targetId: phoneId,
      summary: 'Safari 17 · iPhone（198.51.100.2）',
    });

    const again = await app.inject({ method: 'DELETE', url: `/api/user/sessions/${phoneId}`, headers: desk });
    expect(again.statusCode).toBe(404);

    const deskId = list.find((s: { current: boolean }) => s.current).id;
    const self = await app.inject({ method: 'DELETE', url: `/api/user/sessions/${deskId}`, headers: desk });
    expect(self.json().data).toEqual({ current: true });
    expect((await app.inject({ method: 'GET', url: '/api/user/current', headers: desk })).statusCode).toBe(
      401,
    );
  });

  it('a user cannot see or end someone else’s session (404), and a malformed id is 400', async () => {
    current = await createTestApp();
    const { app, db } = current;
    await seedUser(db, { email: 's@example.com', project: null });
    await seedUser(db, { email: 'x@example.com', project: null });
    const victim = await login(app, 's@example.com', CHROME_WINDOWS, '198.51.100.1');
    const attacker = await login(app, 'x@example.com', CHROME_WINDOWS, '198.51.100.66');
    const [victimId] = (await app.inject({ method: 'GET', url: '/api/user/sessions', headers: victim }))
      .json()
      .data.map((s: { id: string }) => s.id);
    const mine = (await app.inject({ method: 'GET', url: '/api/user/sessions', headers: attacker })).json()
      .data;
    expect(mine.map((s: { id: string }) => s.id)).not.toContain(victimId);

    const res = await app.inject({
      method: 'DELETE',
      url: `/api/user/sessions/${victimId}`,
      headers: attacker,
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().message).toBe('会话不存在或已结束');
    expect((await app.inject({ method: 'GET', url: '/api/user/current', headers: victim })).statusCode).toBe(
      200,
    );

    const bad = await app.inject({
      method: 'DELETE',
      url: '/api/user/sessions/not-an-id',
      headers: attacker,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('会话编号须为 16 位十六进制字符');
    expect(await db.select().from(sessions)).toHaveLength(2);
  });
});
