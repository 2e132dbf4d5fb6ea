import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { codeIn, createTestApp, loginAs, PASSWORD, seedUser } from '../../../test/helpers';
import { loginFailures, sessions } from '../../db/schema';
import { IP_DELAY_MAX_MS, ipDelayMs, retryTimeText } from './login-limit';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

const login = (t: TestApp, payload: unknown, remoteAddress = '10.0.0.1') =>
  t.app.inject({ method: 'POST', url: '/auth/login', payload: payload as object, remoteAddress });

describe('login by phone', () => {
  it('takes a phone with a password, in any of its written forms', async () => {
    current = await createTestApp();
    await seedUser(current.db, { email: 'p@example.com', phone: '13800138000' });
    for (const phone of ['13800138000', '+8613800138000', '8613800138000']) {
      const res = await login(current, { phone, password: PASSWORD });
      expect(res.statusCode, phone).toBe(200);
    }
    const wrong = await login(current, { phone: '13800138000', password: 'nope-1234' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().message).toBe('账号或密码错误');
  });

  it('takes a phone with an SMS code, once; unknown phones get the same answer and no SMS', async () => {
    current = await createTestApp();
    const t = current;
    await seedUser(t.db, { email: 'p@example.com', phone: '13800138000' });

    const unknown = await t.app.inject({
      method: 'POST',
      url: '/auth/sms-captcha',
      payload: { phone: '13900139000' },
    });
    const known = await t.app.inject({
      method: 'POST',
      url: '/auth/sms-captcha',
      payload: { phone: '+8613800138000' },
    });
    expect(known.statusCode).toBe(200);
    expect(known.json().data).toEqual(unknown.json().data);
    expect(known.json().data).toEqual({ channel: 'sms', resendAfterSeconds: 60, expiresInSeconds: 600 });
    expect(t.sms).toHaveLength(1);
    expect(t.sms[0]!.to).toBe('13800138000');
    const code = codeIn(t.sms[0]);
    expect(known.body).not.toContain(code);

    const ok = await login(t, { phone: '13800138000', code });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Consumed: the same code does not work twice.
    const again = await login(t, { phone: '13800138000', code });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ code: 'CODE_INVALID', message: '验证码已过期或不存在，请重新获取' });

    // A resend inside the minute is refused with the wait in seconds.
    const soon = await t.app.inject({
      method: 'POST',
      url: '/auth/sms-captcha',
      payload: { phone: '13800138000' },
    });
    expect(soon.statusCode).toBe(429);
    expect(soon.json().message).toMatch(/^请在 \d+ 秒后重新获取验证码$/);
  });
});

describe('login rate limit', () => {
  it('locks an account after 5 failures for 15 minutes, naming the Shanghai time to retry', async () => {
    current = await createTestApp();
    const t = current;
    await seedUser(t.db, { email: 'a@example.com' });
    const started = Date.now();
    for (let i = 0; i < 5; i++) {
      // Different IPs: the account lock alone must trigger.
      const res = await login(t, { email: 'a@example.com', password: 'wrong-pass-1' }, `10.0.1.${i}`);
      expect(res.statusCode).toBe(401);
    }
    const locked = await login(t, { email: 'A@example.com', password: PASSWORD }, '10.0.2.1');
    expect(locked.statusCode).toBe(429);
    expect(locked.json().code).toBe('RATE_LIMITED');
    const earliest = retryTimeText(new Date(started + 15 * 60_000));
    const latest = retryTimeText(new Date(Date.now() + 15 * 60_000));
    const message = locked.json().message as string;
    expect(message).toMatch(/^登录失败次数过多，请在 \d{2}:\d{2} 后重试$/);
    expect([earliest, latest]).toContain(/(\d{2}:\d{2})/.exec(message)![1]);
    expect(await t.db.select().from(sessions)).toHaveLength(0);

    // Other accounts from other IPs are not affected.
    await seedUser(t.db, { email: 'b@example.com', project: null });
    expect((await login(t, { email: 'b@example.com', password: PASSWORD }, '10.0.3.1')).statusCode).toBe(200);

    // Failures older than 15 minutes no longer count (the state is in the database, so a
    // restart or another process sees the same lock).
    await t.db.update(loginFailures).set({ createdAt: new Date(Date.now() - 16 * 60_000) });
    expect((await login(t, { email: 'a@example.com', password: PASSWORD }, '10.0.2.1')).statusCode).toBe(200);
  });

  it('never locks an address out: a correct login succeeds after many other accounts failed from it', async () => {
    const waits: number[] = [];
    current = await createTestApp({ sleep: async (ms) => void waits.push(ms) });
    const t = current;
    await seedUser(t.db, { email: 'agent@example.com', project: null });
    // One office behind one NAT address: colleagues' typos lock their own accounts, nobody else's.
    for (let i = 0; i < 25; i++) {
      const res = await login(
        t,
        { email: `colleague${i % 5}@example.com`, password: 'wrong-pass-1' },
        '192.0.2.66',
      );
      expect(res.statusCode).toBe(401);
    }
    expect(
      (await login(t, { email: 'colleague0@example.com', password: PASSWORD }, '192.0.2.66')).statusCode,
    ).toBe(429);
    const res = await login(t, { email: 'agent@example.com', password: PASSWORD }, '192.0.2.66');
    expect(res.statusCode, res.body).toBe(200);
    expect(waits.length).toBeGreaterThan(0);
    expect(waits.every((ms) => ms <= IP_DELAY_MAX_MS)).toBe(true);
  });

  it('delays each attempt from an address past 20 failures a little more, up to 5 seconds', async () => {
    const waits: number[] = [];
    current = await createTestApp({ sleep: async (ms) => void waits.push(ms) });
    const t = current;
    await seedUser(t.db, { email: 'agent@example.com', project: null });
    for (let i = 0; i < 23; i++) {
      await login(t, { email: `guess${i}@example.com`, password: 'wrong-pass-1' }, '192.0.2.66');
    }
    // No wait for the first 20 attempts, then 0.25 s more after each failure.
    expect(waits).toEqual([250, 500, 750]);
    expect(
      (await login(t, { email: 'agent@example.com', password: PASSWORD }, '192.0.2.66')).statusCode,
    ).toBe(200);
    expect(waits.at(-1)).toBe(1000);
    // Another address does not wait for this one's failures.
    expect(
      (await login(t, { email: 'agent@example.com', password: PASSWORD }, '192.0.2.77')).statusCode,
    ).toBe(200);
    expect(waits).toHaveLength(4);

    // Capped; the count is in the database (every process sees it) and only covers 15 minutes.
    await t.db.insert(loginFailures).values(
      Array.from({ length: 100 }, () => ({
        id: randomUUID(),
        account: 'email:guess@example.com',
        ip: '192.0.2.66',
        createdAt: new Date(),
      })),
    );
    await login(t, { email: 'agent@example.com', password: PASSWORD }, '192.0.2.66');
    expect(waits.at(-1)).toBe(IP_DELAY_MAX_MS);
    await t.db.update(loginFailures).set({ createdAt: new Date(Date.now() - 16 * 60_000) });
    await login(t, { email: 'agent@example.com', password: PASSWORD }, '192.0.2.66');
    expect(waits).toHaveLength(5);
    expect([0, 19, 20, 21, 39, 40, 1000].map(ipDelayMs)).toEqual([0, 0, 250, 500, 5000, 5000, 5000]);
  });

  it('locks one account behind a shared address and leaves the others at that address alone', async () => {
    current = await createTestApp({ sleep: async () => {} });
    const t = current;
    await seedUser(t.db, { email: 'typo@example.com', project: null });
    await seedUser(t.db, { email: 'careful@example.com', project: null });
    for (let i = 0; i < 5; i++) {
      expect(
        (await login(t, { email: 'typo@example.com', password: 'wrong-pass-1' }, '192.0.2.66')).statusCode,
      ).toBe(401);
    }
    const locked = await login(t, { email: 'typo@example.com', password: PASSWORD }, '192.0.2.66');
    expect(locked.statusCode).toBe(429);
    expect(locked.json().message).toMatch(/^登录失败次数过多，请在 \d{2}:\d{2} 后重试$/);
    expect(
      (await login(t, { email: 'careful@example.com', password: PASSWORD }, '192.0.2.66')).statusCode,
    ).toBe(200);
  });

  it('forgives an account after a successful login', async () => {
    current = await createTestApp();
    const t = current;
    await seedUser(t.db, { email: 'c@example.com', project: null });
    for (let i = 0; i < 4; i++)
      await login(t, { email: 'c@example.com', password: 'bad-pass-1' }, `10.9.0.${i}`);
    await loginAs(t.app, 'c@example.com');
    for (let i = 0; i < 4; i++)
      await login(t, { email: 'c@example.com', password: 'bad-pass-1' }, `10.9.1.${i}`);
    expect((await login(t, { email: 'c@example.com', password: PASSWORD }, '10.9.2.1')).statusCode).toBe(200);
  });

  it('counts wrong SMS codes as failures too', async () => {
    current = await createTestApp();
    const t = current;
    await seedUser(t.db, { email: 'd@example.com', phone: '13700137000', project: null });
    await t.app.inject({ method: 'POST', url: '/auth/sms-captcha', payload: { phone: '13700137000' } });
    const right = codeIn(t.sms[0]);
    const wrong = right === '000000' ? '111111' : '000000';
    const messages: string[] = [];
    for (let i = 0; i < 5; i++) {
      messages.push((await login(t, { phone: '13700137000', code: wrong }, `10.8.0.${i}`)).json().message);
    }
    expect(messages.slice(0, 4)).toEqual([1, 2, 3, 4].map((n) => `验证码错误，还可尝试 ${5 - n} 次`));
    expect(messages[4]).toBe('验证码错误次数过多，请重新获取');
    const res = await login(t, { phone: '13700137000', code: right }, '10.8.1.1');
    expect(res.statusCode).toBe(429);
  });
});
