import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/helpers';
import type { DatabaseHandle } from '../../db/client';
import { oneTimeCodes } from '../../db/schema';
import { consumeLinkToken, issueCode, issueLinkToken, verifyCode } from './codes.service';

let database: DatabaseHandle | undefined;
afterEach(async () => {
  await database?.close();
  database = undefined;
});

const at = (base: Date, seconds: number) => new Date(base.getTime() + seconds * 1000);
const target = 'someone@example.com';

describe('one-time codes', () => {
  it('stores only a hash, expires after 10 minutes and works once', async () => {
    database = await createTestDatabase();
    const { db } = database;
    const t0 = new Date('2026-01-01T00:00:00Z');
    const { code } = await issueCode(db, 'reset_password', target, t0);
    expect(code).toMatch(/^\d{6}$/);
    const [row] = await db.select().from(oneTimeCodes);
    expect(JSON.stringify(row)).not.toContain(code);

    const check = (when: Date, consume = false) =>
      verifyCode(db, { purpose: 'reset_password', target, code, consume }, when);
    await expect(check(at(t0, 599))).resolves.toBeUndefined();
    await expect(check(at(t0, 600))).rejects.toThrow('验证码已过期或不存在，请重新获取');
    // A code for one purpose does not open another.
    await expect(
      verifyCode(db, { purpose: 'login', target, code, consume: false }, at(t0, 1)),
    ).rejects.toThrow('验证码已过期或不存在');
    await check(at(t0, 10), true);
    await expect(check(at(t0, 11))).rejects.toThrow('验证码已过期或不存在');
  });

  it('refuses a resend inside 60 s and retires the older code on a new one', async () => {
    database = await createTestDatabase();
    const { db } = database;
    const t0 = new Date('2026-01-01T00:00:00Z');
    const first = await issueCode(db, 'login', '13800138000', t0);
    await expect(issueCode(db, 'login', '13800138000', at(t0, 45))).rejects.toThrow(
      '请在 15 秒后重新获取验证码',
    );
    // Another target or purpose is not throttled by it.
    await issueCode(db, 'login', '13900139000', at(t0, 1));
    await issueCode(db, 'reset_password', '13800138000', at(t0, 1));
    const second = await issueCode(db, 'login', '13800138000', at(t0, 60));
    if (first.code !== second.code) {
      await expect(
        verifyCode(
          db,
          { purpose: 'login', target: '13800138000', code: first.code, consume: false },
          at(t0, 61),
        ),
      ).rejects.toThrow(/验证码错误/);
    }
    await verifyCode(
      db,
      { purpose: 'login', target: '13800138000', code: second.code, consume: true },
      at(t0, 61),
    );
  });

  it('sends one code when two requests for the same recipient arrive together', async () => {
    database = await createTestDatabase();
    const { db } = database;
    const t0 = new Date('2026-01-01T00:00:00Z');
    const results = await Promise.allSettled([
      issueCode(db, 'reset_password', target, t0),
      issueCode(db, 'reset_password', target, t0),
      issueLinkToken(db, 'reset_link', target, t0),
      issueLinkToken(db, 'reset_link', target, t0),
    ]);
    // Which of each pair wins is up to the database; that exactly one does is not.
    const won = (pair: PromiseSettledResult<unknown>[]) =>
      pair.filter((r) => r.status === 'fulfilled').length;
    expect([won(results.slice(0, 2)), won(results.slice(2))]).toEqual([1, 1]);
    expect(await db.select().from(oneTimeCodes)).toHaveLength(2);
  });

  it('dies after 5 wrong attempts, even for the right code', async () => {
    database = await createTestDatabase();
    const { db } = database;
    const t0 = new Date();
    const { code } = await issueCode(db, 'reset_password', target, t0);
    const wrong = code === '123456' ? '654321' : '123456';
    const errors: string[] = [];
    for (let i = 0; i < 5; i++) {
      await verifyCode(db, { purpose: 'reset_password', target, code: wrong, consume: false }, t0).catch(
        (e) => errors.push(e.message),
      );
    }
    expect(errors).toEqual([
      '验证码错误，还可尝试 4 次',
      '验证码错误，还可尝试 3 次',
      '验证码错误，还可尝试 2 次',
      '验证码错误，还可尝试 1 次',
      '验证码错误次数过多，请重新获取',
    ]);
    await expect(
      verifyCode(db, { purpose: 'reset_password', target, code, consume: true }, t0),
    ).rejects.toThrow('验证码错误次数过多，请重新获取');
  });

  it('link tokens: 30 minutes, once, hashed', async () => {
    database = await createTestDatabase();
    const { db } = database;
    const t0 = new Date('2026-01-01T00:00:00Z');
    const a = await issueLinkToken(db, 'reset_link', target, t0);
    expect(a.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(await db.select().from(oneTimeCodes))).not.toContain(a.token);
    await expect(consumeLinkToken(db, a.token, at(t0, 1800))).rejects.toThrow('链接无效或已过期');
    const b = await issueLinkToken(db, 'change_password', target, at(t0, 60));
    expect(await consumeLinkToken(db, b.token, at(t0, 61))).toBe(target);
    await expect(consumeLinkToken(db, b.token, at(t0, 62))).rejects.toThrow('链接无效或已过期');
  });
});
