import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { codeIn, createTestApp, loginAs, PASSWORD, seedUser, testEnv, tokenIn } from '../../../test/helpers';
import { auditLog, outbox, sessions } from '../../db/schema';
import { providersFromEnv } from '../../providers';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

const NEW_PASSWORD = 'brand-new-pass-2';

describe('forgotten password by code', () => {
  it('sends, verifies and resets by e-mail code, ending every session', async () => {
    current = await createTestApp();
    const t = current;
    await seedUser(t.db, { email: 'wang@example.com' });
    const before = await loginAs(t.app, 'wang@example.com');

    const unknown = await t.app.inject({
      method: 'POST',
      url: '/api/user/send_code',
      payload: { target: 'nobody@example.com' },
    });
    const sent = await t.app.inject({
      method: 'POST',
      url: '/api/user/send_code',
      payload: { target: 'Wang@Example.com' },
    });
    expect(sent.statusCode).toBe(200);
    expect(sent.json().data).toEqual(unknown.json().data);
    expect(t.emails).toHaveLength(1);
    expect(t.emails[0]!.to).toBe('wang@example.com');
    const code = codeIn(t.emails[0]);
    expect(sent.body).not.toContain(code);

    const wrong = code === '000000' ? '999999' : '000000';
    const bad = await t.app.inject({
      method: 'GET',
      url: `/api/user/verify_code?target=wang@example.com&code=${wrong}`,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'CODE_INVALID', message: '验证码错误，还可尝试 4 次' });
    const good = await t.app.inject({
      method: 'GET',
      url: `/api/user/verify_code?target=wang@example.com&code=${code}`,
    });
    expect(good.json()).toMatchObject({ success: true, data: { valid: true } });

    const weak = await t.app.inject({
      method: 'POST',
      url: '/api/user/reset_pwd',
      payload: { target: 'wang@example.com', code, password: 'onlyletters' },
    });
    expect(weak.statusCode).toBe(400);
    expect(weak.json().message).toContain('字段 password：密码须同时包含字母和数字');

    const reset = await t.app.inject({
      method: 'POST',
      url: '/api/user/reset_pwd',
      payload: { target: 'wang@example.com', code, password: NEW_PASSWORD },
      remoteAddress: '198.51.100.4',
    });
    expect(reset.statusCode).toBe(200);
    // The account's owner sees the reset in 操作日志, with where it came from.
    expect(await t.db.select().from(auditLog).where(eq(auditLog.action, 'auth.password_reset'))).toEqual([
      expect.objectContaining({
        actor: 'wang@example.com',
        ip: '198.51.100.4',
        summary: '凭邮箱验证码重置密码，所有设备已下线',
      }),
    ]);
    expect((await t.app.inject({ method: 'GET', url: '/api/profile', headers: before })).statusCode).toBe(
      401,
    );
    expect(await t.db.select().from(sessions)).toHaveLength(0);
    await loginAs(t.app, 'wang@example.com', NEW_PASSWORD);

    const reused = await t.app.inject({
      method: 'POST',
      url: '/api/user/reset_pwd',
      payload: { target: 'wang@example.com', code, password: 'another-pass-3' },
    });
    expect(reused.statusCode).toBe(400);
    expect(reused.json().message).toBe('验证码已过期或不存在，请重新获取');
  });

  it('sends the code by SMS to a phone', async () => {
    current = await createTestApp();
    const t = current;
    await seedUser(t.db, { email: 'zhao@example.com', phone: '13600136000', project: null });
    const sent = await t.app.inject({
      method: 'POST',
      url: '/api/user/send_code',
      payload: { target: '+86 13600136000'.replace(' ', '') },
    });
    expect(sent.json().data.channel).toBe('sms');
    const reset = await t.app.inject({
      method: 'POST',
      url: '/api/user/reset_pwd',
      payload: { target: '13600136000', code: codeIn(t.sms[0]), password: NEW_PASSWORD },
    });
    expect(reset.statusCode).toBe(200);
    await loginAs(t.app, 'zhao@example.com', NEW_PASSWORD);
  });
});

describe('a failing mail server', () => {
  it('answers 503 in Chinese without its internals', async () => {
    current = await createTestApp();
    const t = current;
    await seedUser(t.db, { email: 'fail@example.com', project: null });
    t.app.providers.email = {
      send: async () => {
        throw new Error('550 relay denied by smtp.internal');
      },
    };
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/user/send_code',
      payload: { target: 'fail@example.com' },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: '消息发送失败，请稍后重试' });
    expect(res.body).not.toContain('smtp.internal');
    // The undelivered code does not hold the resend throttle.
    const retry = await t.app.inject({
      method: 'POST',
      url: '/api/user/send_code',
      payload: { target: 'fail@example.com' },
    });
    expect(retry.statusCode).toBe(503);
  });
});

describe('password links', () => {
  it('resets by an e-mailed link once, and ends every session', async () => {
    current = await createTestApp({ env: { PUBLIC_URL: 'https://call.example.com' } });
    const t = current;
    await seedUser(t.db, { email: 'li@example.com', project: null });
    const before = await loginAs(t.app, 'li@example.com');
    const ask = await t.app.inject({
      method: 'POST',
      url: '/auth/reset_password',
      payload: { email: 'li@example.com' },
    });
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/auth/reset_password',
      payload: { email: 'ghost@example.com' },
    });
    expect(ask.json().data).toEqual(unknown.json().data);
    expect(t.emails).toHaveLength(1);
    expect(t.emails[0]!.text).toMatch(
      /https:\/\/call\.example\.com\/forget-password\?token=[A-Za-z0-9_-]{43}/,
    );
    const token = tokenIn(t.emails[0]);
    expect(ask.body).not.toContain(token);

    const done = await t.app.inject({
      method: 'POST',
      url: '/auth/reset_password_done',
      payload: { token, password: NEW_PASSWORD },
    });
    expect(done.statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/profile', headers: before })).statusCode).toBe(
      401,
    );
    const headers = await loginAs(t.app, 'li@example.com', NEW_PASSWORD);
    const mine = await t.app.inject({
      method: 'GET',
      url: '/api/user/audit-log?action=auth.password_reset',
      headers,
    });
    expect(mine.json().data).toMatchObject({
      total: 1,
      items: [
        { actor: 'li@example.com', actionLabel: '重置密码', summary: '凭邮件链接重置密码，所有设备已下线' },
      ],
    });
    const twice = await t.app.inject({
      method: 'POST',
      url: '/auth/reset_password_done',
      payload: { token, password: 'third-pass-3' },
    });
    expect(twice.statusCode).toBe(400);
    expect(twice.json().message).toBe('链接无效或已过期，请重新获取');
  });

  it('mails a logged-in user a change-password link at the request origin', async () => {
    current = await createTestApp();
    const t = current;
    await seedUser(t.db, { email: 'sun@example.com', project: null });
    const headers = await loginAs(t.app, 'sun@example.com');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/user/send_change_pwd_email',
      headers: { ...headers, host: 'console.example.org' },
    });
    expect(res.statusCode).toBe(200);
    expect(t.emails[0]!.to).toBe('sun@example.com');
    expect(t.emails[0]!.text).toContain('http://console.example.org/forget-password?token=');
    const done = await t.app.inject({
      method: 'POST',
      url: '/auth/reset_password_done',
      payload: { token: tokenIn(t.emails[0]), password: NEW_PASSWORD },
    });
    expect(done.statusCode).toBe(200);
    expect((await t.app.inject({ method: 'POST', url: '/api/user/send_change_pwd_email' })).statusCode).toBe(
      401,
    );
  });
});

describe('secrets stay out of the log', () => {
  it('never logs a code or a reset token, and the outbox keeps them for the operator', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'callpilot-outbox-'));
    let log = '';
    const stream = new Writable({
      write(chunk, _enc, done) {
        log += chunk.toString();
        done();
      },
    });
    const t = await createTestApp({
      env: { DATA_DIR: dataDir, LOG_LEVEL: 'trace' },
      logger: { level: 'trace', stream },
    });
    current = t;
    try {
      // The real development outbox, not the test capture.
      const real = providersFromEnv(testEnv({ DATA_DIR: dataDir }), t.db, t.app.log);
      t.app.providers.email = real.email;
      t.app.providers.sms = real.sms;
      await seedUser(t.db, { email: 'qian@example.com', phone: '13500135000', project: null });

      await t.app.inject({
        method: 'POST',
        url: '/api/user/send_code',
        payload: { target: 'qian@example.com' },
      });
      await t.app.inject({ method: 'POST', url: '/auth/sms-captcha', payload: { phone: '13500135000' } });
      await t.app.inject({
        method: 'POST',
        url: '/auth/reset_password',
        payload: { email: 'qian@example.com' },
      });
      const rows = await t.db.select().from(outbox);
      expect(rows).toHaveLength(3);
      const lines = fs.readFileSync(path.join(dataDir, 'outbox.jsonl'), 'utf8').trim().split('\n');
      expect(lines).toHaveLength(3);
      const secrets = rows.map((r) => /(\d{6})|token=([A-Za-z0-9_-]+)/.exec(r.body)!.slice(1).find(Boolean)!);
      expect(secrets).toHaveLength(3);

      const code = secrets[0]!;
      await t.app.inject({
        method: 'GET',
        url: `/api/user/verify_code?target=qian@example.com&code=${code}`,
      });
      await t.app.inject({
        method: 'POST',
        url: '/api/user/reset_pwd',
        payload: { target: 'qian@example.com', code, password: NEW_PASSWORD },
      });
      await t.app.inject({ method: 'GET', url: `/forget-password?token=${secrets[2]}` });
      await t.app.inject({
        method: 'POST',
        url: '/auth/reset_password_done',
        payload: { token: secrets[2], password: NEW_PASSWORD },
      });

      expect(log).toContain('message queued in development outbox (npm run admin -- outbox)');
      expect(log).toContain('verify_code');
      for (const secret of secrets) expect(log).not.toContain(secret);
      expect(log).not.toContain(NEW_PASSWORD);
      expect(log).not.toContain(PASSWORD);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
