import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp } from '../../../test/helpers';
import { oemConfigs } from '../../db/schema';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

describe('GET /api/oem/:host', () => {
  it('answers the brand of a white-labelled host without login, and nothing otherwise', async () => {
    current = await createTestApp();
    const { app, db } = current;
    const logo = 'data:image/png;base64,iVBORw0KGgo=';
    await db.insert(oemConfigs).values([
      { host: 'call.partner.cn', name: '伙伴外呼', logo },
      { host: 'old.partner.cn', name: '旧品牌', enabled: false },
    ]);
    const on = await app.inject({ method: 'GET', url: '/api/oem/Call.Partner.CN' });
    expect(on.json()).toMatchObject({ success: true, data: { status: true, name: '伙伴外呼', logo } });
    for (const host of ['old.partner.cn', 'unknown.example.com', encodeURIComponent("' OR 1=1 --")]) {
      const res = await app.inject({ method: 'GET', url: `/api/oem/${host}` });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ status: false, name: '', logo: '' });
    }
    const long = await app.inject({ method: 'GET', url: `/api/oem/${'a'.repeat(254)}` });
    expect(long.statusCode).toBe(400);
    expect(long.json().message).toContain('域名不能超过 253 个字符');
    const huge = await app.inject({ method: 'GET', url: `/api/oem/${'a'.repeat(400)}` });
    expect(huge.statusCode).toBe(414);
    expect(huge.json()).toMatchObject({ success: false, message: '请求地址过长' });
  });
});

describe('GET /api/console/config', () => {
  it('gives the console the configured sales phone without login', async () => {
    current = await createTestApp({ env: { SALES_PHONE: '400-820-8820' } });
    const res = await current.app.inject({ method: 'GET', url: '/api/console/config' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ salesPhone: '400-820-8820' });
  });
});
