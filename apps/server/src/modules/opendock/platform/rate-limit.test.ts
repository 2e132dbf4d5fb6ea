import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryRateLimitCounter } from '../../../plugins/rate-limits';
import { bearer, opendockApp, seedApiKey, type TestApp } from './opendock.test-helper';
import { KeyRateLimiter } from './rate-limit';

let current: TestApp | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await current?.app.close();
  current = undefined;
});

describe('per-key rate limit', () => {
  it('counts a fixed 60 s window per key and reports what is left', async () => {
    let now = 1_000_000;
    const limiter = new KeyRateLimiter(new MemoryRateLimitCounter(() => now));
    expect(await limiter.take('k', 2)).toEqual({ allowed: true, limit: 2, remaining: 1, resetSeconds: 60 });
    now += 10_500;
    expect(await limiter.take('k', 2)).toEqual({ allowed: true, limit: 2, remaining: 0, resetSeconds: 50 });
    expect(await limiter.take('k', 2)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 50 });
    expect(await limiter.take('other', 2)).toMatchObject({ allowed: true, remaining: 1 });
    now += 49_500;
    expect(await limiter.take('k', 2)).toEqual({ allowed: true, limit: 2, remaining: 1, resetSeconds: 60 });
  });

  it('puts the headers on every answer and answers 429 with Retry-After beyond the limit', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const t = await opendockApp();
    current = t;
    const { app, db, a } = t;
    const { secret } = await seedApiKey(db, {
      projectId: a.projectId,
      rateLimitPerMinute: 3,
      scopes: { sms: 'read' },
    });
    const me = await app.inject({ url: '/opendock/v1/me', headers: bearer(secret) });
    expect(me.statusCode).toBe(200);
    expect(me.headers).toMatchObject({
      'ratelimit-policy': '3;w=60',
      ratelimit: 'limit=3, remaining=2, reset=60',
      'ratelimit-limit': '3',
      'ratelimit-remaining': '2',
      'ratelimit-reset': '60',
    });
    // A refusal for scope still tells the caller where it stands.
    const noScope = await app.inject({ url: '/opendock/v1/test-reads', headers: bearer(secret) });
    expect(noScope.statusCode).toBe(403);
    expect(noScope.headers.ratelimit).toBe('limit=3, remaining=1, reset=60');
    vi.setSystemTime(Date.now() + 15_000);
    expect(
      (await app.inject({ url: '/opendock/v1/me', headers: bearer(secret) })).headers['ratelimit-remaining'],
    ).toBe('0');
    const limited = await app.inject({ url: '/opendock/v1/me', headers: bearer(secret) });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBe('45');
    expect(limited.headers.ratelimit).toBe('limit=3, remaining=0, reset=45');
    expect(limited.json()).toMatchObject({
      success: false,
      status: 429,
      code: 'RATE_LIMITED',
      message: '请求过于频繁：该 API 密钥每分钟最多 3 次请求，请在 45 秒后重试',
    });
    // Another key of the same project has its own window.
    const other = await seedApiKey(db, { projectId: a.projectId, rateLimitPerMinute: 3 });
    expect((await app.inject({ url: '/opendock/v1/me', headers: bearer(other.secret) })).statusCode).toBe(
      200,
    );

    vi.setSystemTime(Date.now() + 45_000);
    const again = await app.inject({ url: '/opendock/v1/me', headers: bearer(secret) });
    expect(again.statusCode).toBe(200);
    expect(again.headers.ratelimit).toBe('limit=3, remaining=2, reset=60');
  });

  it('does not spend the limit on requests from an address the allowlist refuses', async () => {
    const t = await opendockApp();
    current = t;
    const { app, db, a } = t;
    const { secret } = await seedApiKey(db, {
      projectId: a.projectId,
      rateLimitPerMinute: 1,
      ipAllowlist: ['203.0.113.7'],
    });
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({
        url: '/opendock/v1/me',
        headers: bearer(secret),
        remoteAddress: '198.51.100.9',
      });
      expect(res.statusCode).toBe(403);
    }
    const owner = await app.inject({
      url: '/opendock/v1/me',
      headers: bearer(secret),
      remoteAddress: '203.0.113.7',
    });
    expect(owner.statusCode).toBe(200);
  });
});
