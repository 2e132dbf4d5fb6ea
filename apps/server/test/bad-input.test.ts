import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser, tableCounts } from './helpers';

/**
 * Every identity endpoint, fed what a careless or hostile client sends: missing fields, wrong
 * types, overlong text, unicode, injection-looking strings. Each must answer 4xx with a
 * Chinese message and leave the database as it was.
 */
let t: Awaited<ReturnType<typeof createTestApp>>;
let auth: { authorization: string };
beforeAll(async () => {
  t = await createTestApp();
  await seedUser(t.db, { email: 'owner@example.com', phone: '13800138000' });
  auth = await loginAs(t.app, 'owner@example.com');
});
afterAll(() => t.app.close());

const INJECTION = "' OR 1=1 --";
const SCRIPT = '<script>alert(1)</script>';
const long = (n: number) => 'x'.repeat(n);

type Case = [method: 'GET' | 'POST' | 'PUT', url: string, payload: unknown, authed?: boolean];

const cases: Case[] = [
  ['POST', '/auth/login', {}],
  ['POST', '/auth/login', { email: 123, password: 'secret-pass-1' }],
  ['POST', '/auth/login', { email: INJECTION, password: 'secret-pass-1' }],
  ['POST', '/auth/login', { email: SCRIPT, password: 'secret-pass-1' }],
  ['POST', '/auth/login', { email: 'owner@example.com', password: INJECTION }],
  ['POST', '/auth/login', { email: 'owner@example.com', password: long(129) }],
  ['POST', '/auth/login', { email: `${long(250)}@example.com`, password: 'secret-pass-1' }],
  ['POST', '/auth/login', { phone: '1380013800', password: 'secret-pass-1' }],
  ['POST', '/auth/login', { phone: '13800138000' }],
  ['POST', '/auth/login', { email: 'owner@example.com', phone: '13800138000', password: 'secret-pass-1' }],
  ['POST', '/auth/login', { email: 'owner@example.com', code: '123456' }],
  ['POST', '/auth/login', { phone: '13800138000', code: '12345a' }],
  ['POST', '/auth/login', { email: '用户@例子', password: '密码密码密码' }],
  ['POST', '/auth/register', {}],
  ['POST', '/auth/register', { email: 'n@example.com', password: 'abcdefgh', displayName: '新用户' }],
  ['POST', '/auth/register', { email: 'n@example.com', password: '12345678', displayName: '新用户' }],
  ['POST', '/auth/register', { email: 'n@example.com', password: 'good-pass-1', displayName: '   ' }],
  ['POST', '/auth/register', { email: 'n@example.com', password: 'good-pass-1', displayName: long(51) }],
  ['POST', '/auth/register', { email: 'n@example.com', password: 'good-pass-1', displayName: 42 }],
  ['POST', '/auth/register', { email: INJECTION, password: 'good-pass-1', displayName: SCRIPT }],
  ['POST', '/auth/register', { email: 'owner@example.com', password: 'good-pass-1', displayName: '重复' }],
  ['POST', '/auth/sms-captcha', {}],
  ['POST', '/auth/sms-captcha', { phone: INJECTION }],
  ['POST', '/auth/sms-captcha', { phone: SCRIPT }],
  ['POST', '/auth/sms-captcha', { phone: 13800138000 }],
  ['PUT', '/api/project/register', {}, true],
  ['PUT', '/api/project/register', { name: '', company: '公司', industry: '教育' }, true],
  ['PUT', '/api/project/register', { name: long(51), company: '公司', industry: '教育' }, true],
  ['PUT', '/api/project/register', { name: '项目', company: long(101), industry: '教育' }, true],
  ['PUT', '/api/project/register', { name: 1, company: '公司', industry: '教育' }, true],
  ['PUT', '/api/project/register', { name: '项目', company: '公司', industry: '教育' }, false],
  ['PUT', '/api/profile', { displayName: '' }, true],
  ['PUT', '/api/profile', { displayName: '名字', profile: long(501) }, true],
  ['PUT', '/api/profile', { displayName: '名字', profile: 5 }, true],
  ['PUT', '/api/profile', { displayName: '名字' }, false],
  ['PUT', '/api/user/password', {}, true],
  ['PUT', '/api/user/password', { oldPassword: 'secret-pass-1', password: 'short1' }, true],
  ['PUT', '/api/user/password', { oldPassword: INJECTION, password: 'good-pass-12' }, true],
  ['POST', '/api/user/send_code', {}],
  ['POST', '/api/user/send_code', { target: INJECTION }],
  ['POST', '/api/user/send_code', { target: SCRIPT }],
  ['POST', '/api/user/send_code', { target: long(300) }],
  ['POST', '/api/user/send_code', { target: ['owner@example.com'] }],
  ['GET', '/api/user/verify_code', undefined],
  ['GET', '/api/user/verify_code?target=owner@example.com&code=abcdef', undefined],
  ['GET', '/api/user/verify_code?target=owner@example.com&code=1234567', undefined],
  ['GET', `/api/user/verify_code?target=${encodeURIComponent(INJECTION)}&code=123456`, undefined],
  ['GET', '/api/user/verify_code?target=owner@example.com&code=123456', undefined],
  ['POST', '/api/user/reset_pwd', {}],
  ['POST', '/api/user/reset_pwd', { target: 'owner@example.com', code: '123456', password: 'good-pass-1' }],
  ['POST', '/api/user/reset_pwd', { target: 'owner@example.com', code: '123456', password: 'weak' }],
  ['POST', '/api/user/send_change_pwd_email', undefined, false],
  ['POST', '/auth/reset_password', {}],
  ['POST', '/auth/reset_password', { email: 'not-an-email' }],
  ['POST', '/auth/reset_password', { email: SCRIPT }],
  ['POST', '/auth/reset_password_done', {}],
  ['POST', '/auth/reset_password_done', { token: 'short', password: 'good-pass-1' }],
  ['POST', '/auth/reset_password_done', { token: long(201), password: 'good-pass-1' }],
  ['POST', '/auth/reset_password_done', { token: 'A'.repeat(43), password: 'good-pass-1' }],
  ['POST', '/auth/reset_password_done', { token: INJECTION.repeat(3), password: 'good-pass-1' }],
  ['POST', '/auth/refresh-token', undefined, false],
  ['GET', '/auth/logout', undefined, false],
];

describe('bad input to every identity endpoint', () => {
  it('answers 4xx with a Chinese message and changes nothing', async () => {
    const before = await tableCounts(t.db);
    for (const [method, url, payload, authed] of cases) {
      const label = `${method} ${url} ${JSON.stringify(payload)?.slice(0, 80)}`;
      const res = await t.app.inject({
        method,
        url,
        ...(payload !== undefined ? { payload: payload as object } : {}),
        headers: authed ? auth : {},
      });
      expect(res.statusCode, label).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, label).toBeLessThan(500);
      const body = res.json();
      expect(body.success, label).toBe(false);
      expect(body.message, label).toMatch(/[\u4e00-\u9fa5]/);
    }
    expect(await tableCounts(t.db)).toEqual(before);
  });
});
