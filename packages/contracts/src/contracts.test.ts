import { describe, expect, it } from 'vitest';
import { envelope, errorEnvelope, loginRequest, sessionToken } from './index';

describe('contracts', () => {
  it('explains a bad login body in Chinese, per field', () => {
    const r = loginRequest.safeParse({ email: 'not-an-email', password: '' });
    expect(r.success).toBe(false);
    const byField = Object.fromEntries(r.error!.issues.map((i) => [i.path.join('.'), i.message]));
    expect(byField).toEqual({ email: '邮箱格式不正确', password: '请输入密码' });
  });

  it('accepts only a successful envelope around the declared data', () => {
    const schema = envelope(sessionToken);
    const good = {
      success: true,
      status: 200,
      data: { token: 't', expiresAt: '2026-11-29T00:00:00.000Z' },
      message: 'ok',
      msg: 'ok',
      error: null,
    };
    expect(schema.safeParse(good).success).toBe(true);
    expect(schema.safeParse({ ...good, success: false }).success).toBe(false);
    expect(schema.safeParse({ ...good, data: { token: 't' } }).success).toBe(false);
  });

  it('requires an error answer to carry a machine-readable code', () => {
    const base = { success: false, status: 404, data: null, message: 'x', msg: 'x', error: 'x' };
    expect(errorEnvelope.safeParse({ ...base, code: 'NOT_FOUND' }).success).toBe(true);
    expect(errorEnvelope.safeParse(base).success).toBe(false);
    expect(errorEnvelope.safeParse({ ...base, code: 'SOMETHING_ELSE' }).success).toBe(false);
  });
});
