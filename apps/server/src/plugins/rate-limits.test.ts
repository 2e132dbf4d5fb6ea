import { afterEach, describe, expect, it } from 'vitest';
import { bearer, seedApiKey } from '../../test/api-keys';
import { createTestApp, createTestDatabase, seedUser, tableCounts, testEnv } from '../../test/helpers';
import { buildApp } from '../app';
import { openDatabase } from '../db/client';
import { rateLimitHits } from '../db/schema';
import { captureProviders } from '../providers';
import { DatabaseRateLimitCounter, PUBLIC_RATE_LIMITS } from './rate-limits';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function testApp() {
  const t = await createTestApp();
  closers.push(() => t.app.close());
  return t;
}

const phoneNo = (i: number) => `138${String(10_000_000 + i).slice(-8)}`;
const sendLoginCode = (app: TestApp['app'], i: number, remoteAddress = '203.0.113.7') =>
  app.inject({ method: 'POST', url: '/auth/sms-captcha', payload: { phone: phoneNo(i) }, remoteAddress });

describe('public endpoint rate limits', () => {
  it('refuse code sending past the limit from one address, in Chinese, with Retry-After, sending nothing', async () => {
    const { app, db } = await testApp();
    const { max } = PUBLIC_RATE_LIMITS.sendCode;
    for (let i = 0; i < max; i++) expect((await sendLoginCode(app, i)).statusCode).toBe(200);
    const before = await tableCounts(db);

    // The reset-code route counts in the same bucket: switching endpoints is no way around it.
    const refused = await app.inject({
      method: 'POST',
      url: '/api/user/send_code',
      payload: { target: 'someone@example.com' },
      remoteAddress: '203.0.113.7',
    });
    expect(refused.statusCode).toBe(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(500);
    expect(retryAfter).toBeLessThanOrEqual(600);
    expect(refused.json()).toMatchObject({ success: false, status: 429 });
    expect(refused.json().message).toBe(`请求过于频繁，请 ${retryAfter} 秒后再试`);
    expect((await sendLoginCode(app, max + 1)).statusCode).toBe(429);
    expect(await tableCounts(db)).toEqual(before);

    // Another address is not affected.
    expect((await sendLoginCode(app, max + 2, '198.51.100.9')).statusCode).toBe(200);
  }, 120_000);

  it('limit registration per address without creating the refused account', async () => {
    const { app, db } = await testApp();
    const register = (i: number) =>
      app.inject({
        method: 'POST',
        url: '/auth/register',
        payload: { email: `u${i}@example.com`, password: 'secret-pass-1', displayName: `用户${i}` },
        remoteAddress: '203.0.113.8',
      });
    const { max } = PUBLIC_RATE_LIMITS.register;
    for (let i = 0; i < max; i++) expect((await register(i)).statusCode).toBe(200);
    const before = await tableCounts(db);
    const refused = await register(max);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().message).toMatch(/^请求过于频繁，请 \d+ 秒后再试$/);
    expect(await tableCounts(db)).toEqual(before);
  }, 120_000);

  it('limit the OEM lookup per address', async () => {
    const { app } = await testApp();
    const { max } = PUBLIC_RATE_LIMITS.oemLookup;
    const lookup = () =>
      app.inject({ method: 'GET', url: '/api/oem/localhost', remoteAddress: '203.0.113.9' });
    for (let i = 0; i < max; i++) expect((await lookup()).statusCode).toBe(200);
    const refused = await lookup();
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  }, 120_000);
});

describe('the database counter', () => {
  it('shares one window between counters (processes), restarts it when it ends, and sweeps ended rows', async () => {
    const database = await createTestDatabase();
    closers.push(() => database.close());
    const one = new DatabaseRateLimitCounter(database.db);
    const two = new DatabaseRateLimitCounter(database.db);
    const hits = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).hit('203.0.113.7:sendCode', 60_000)),
    );
    expect(hits.map((h) => h.hits).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(hits.every((h) => h.ttlMs > 55_000 && h.ttlMs <= 60_000)).toBe(true);

    await one.hit('203.0.113.7:register', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await two.hit('203.0.113.7:register', 60_000)).toMatchObject({ hits: 1 });

    await one.hit('198.51.100.1:oemLookup', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await two.sweep();
    const keys = (await database.db.select({ key: rateLimitHits.key }).from(rateLimitHits)).map((r) => r.key);
    expect(keys.sort()).toEqual(['203.0.113.7:register', '203.0.113.7:sendCode']);
  });

  it.skipIf(process.env.TEST_DB !== 'pg')(
    'is what two API processes on one PostgreSQL count with: the limit holds across them',
    async () => {
      // Two apps, each with its own pool, on one fresh database: what two processes see.
      const first = await createTestDatabase();
      closers.push(() => first.close());
      const url = new URL(process.env.TEST_DATABASE_URL!);
      const name = (
        (await first.db.execute('select current_database() as name')) as unknown as {
          rows: { name: string }[];
        }
      ).rows[0]!.name;
      url.pathname = `/${name}`;
      const second = await openDatabase({ kind: 'postgres', url: url.toString(), poolSize: 2 });
      closers.push(() => second.close());
      const apps: Awaited<ReturnType<typeof buildApp>>[] = [];
      for (const database of [first, second]) {
        const app = await buildApp({
          database,
          env: testEnv(),
          logger: false,
          providers: captureProviders().providers,
        });
        closers.push(() => app.close());
        apps.push(app);
      }
      const { max } = PUBLIC_RATE_LIMITS.sendCode;
      for (let i = 0; i < max; i++) {
        expect((await sendLoginCode(apps[i % 2]!, i, '203.0.113.10')).statusCode).toBe(200);
      }
      expect((await sendLoginCode(apps[0]!, max, '203.0.113.10')).statusCode).toBe(429);
      expect((await sendLoginCode(apps[1]!, max + 1, '203.0.113.10')).statusCode).toBe(429);

      // An API key's per-minute limit is the deployment's, not each process's.
      const owner = await seedUser(first.db, { email: 'dev@example.com' });
      const { secret } = await seedApiKey(first.db, { projectId: owner.projectId, rateLimitPerMinute: 4 });
      const me = (i: number) => apps[i % 2]!.inject({ url: '/opendock/v1/me', headers: bearer(secret) });
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await me(i));
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 429]);
      expect(answers.map((a) => a.headers['ratelimit-remaining'])).toEqual(['3', '2', '1', '0', '0']);
    },
  );
});
