import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedTwoProjects, testEnv } from '../../../test/helpers';
import { smsSettings } from '../../db/schema';
import { loadAppSecret } from '../../lib/secret-box';
import { submitForReview } from './sms-review.service';
import { smsProviderCredentials } from './sms-settings';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;
let t: TestApp;
let a: { userId: string; projectId: string };
let owner: Headers;
let member: Headers;
let outsider: Headers;

beforeAll(async () => {
  t = await createTestApp();
  ({ a, owner, memberHeaders: member, outsider } = await seedTwoProjects(t.db, t.app));
});
afterAll(() => t?.app.close());

const url = () => `/api/project/${a.projectId}/sms/settings`;
const put = (payload: unknown, headers: Headers = owner) =>
  t.app.inject({ method: 'PUT', url: url(), headers, payload: payload as object });
const SECRET = 'aliyun-secret-9f8e7d6c5b4a';

describe('SMS provider settings (短信服务商)', () => {
  it('starts on the development outbox and keeps secrets on the server, encrypted', async () => {
    const initial = await t.app.inject({ url: url(), headers: member });
    expect(initial.json().data).toMatchObject({ provider: 'outbox', hasSecret: false, dailyCapPerNumber: 5 });

    expect(
      (await put({ provider: 'aliyun', accessKeyId: 'LTAI5tExample', dailyCapPerNumber: 3 })).json(),
    ).toMatchObject({ message: '字段 accessKeySecret：请输入 AccessKey Secret' });
    const saved = await put({
      provider: 'aliyun',
      accessKeyId: 'LTAI5tExample',
      accessKeySecret: SECRET,
      dailyCapPerNumber: 3,
    });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json().data).toMatchObject({ provider: 'aliyun', keyId: 'LTAI5tExample', hasSecret: true });
    expect(saved.body).not.toContain(SECRET);
    expect((await t.app.inject({ url: url(), headers: member })).body).not.toContain(SECRET);
    const [row] = await t.db.select().from(smsSettings).where(eq(smsSettings.projectId, a.projectId));
    expect(JSON.stringify(row)).not.toContain(SECRET);

    // Changing the cap keeps the stored secret of the same key; a new key id needs its own secret.
    const capped = await put({ provider: 'aliyun', accessKeyId: 'LTAI5tExample', dailyCapPerNumber: 8 });
    expect(capped.json().data).toMatchObject({ dailyCapPerNumber: 8, hasSecret: true });
    const secret = loadAppSecret(testEnv());
    expect(await smsProviderCredentials(t.db, secret, a.projectId)).toEqual({
      provider: 'aliyun',
      credentials: { accessKeyId: 'LTAI5tExample', accessKeySecret: SECRET },
    });
    expect(
      (await put({ provider: 'aliyun', accessKeyId: 'LTAI5tOther', dailyCapPerNumber: 8 })).statusCode,
    ).toBe(400);
  });

  it('checks Tencent fields by name, and only owners and admins may change the provider', async () => {
    const bad = await put({
      provider: 'tencent',
      secretId: 'AKIDexample',
      secretKey: 'k',
      sdkAppId: '1400xyz',
      region: 'guangzhou',
      dailyCapPerNumber: 5,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/SmsSdkAppId 须为数字|地域格式不正确/);
    expect((await put({ provider: 'outbox', dailyCapPerNumber: 5 }, member)).statusCode).toBe(403);
    expect((await put({ provider: 'outbox', dailyCapPerNumber: 5 }, outsider)).statusCode).toBe(403);
    expect((await t.app.inject({ url: url(), headers: outsider })).statusCode).toBe(403);
    expect((await put({ provider: 'outbox', dailyCapPerNumber: 51 })).json().message).toContain(
      '每号码每日上限不能超过 50',
    );
    const tencent = await put({
      provider: 'tencent',
      secretId: 'AKIDexample',
      secretKey: 'tencent-key',
      sdkAppId: '1400006666',
      region: 'ap-guangzhou',
      dailyCapPerNumber: 5,
    });
    expect(tencent.json().data).toMatchObject({
      provider: 'tencent',
      sdkAppId: '1400006666',
      region: 'ap-guangzhou',
    });
  });

  it('refuses a cloud review plainly where no provider client is given, changing nothing', async () => {
    const made = await t.app.inject({
      method: 'POST',
      url: `/api/project/${a.projectId}/sms/templates`,
      headers: owner,
      payload: { name: '通知', type: 'notification', content: '您的订单已发货，请注意查收。' },
    });
    const id = made.json().data.id;
    // The routes submit through the project's client (sms-cloud.test.ts, against local fake
    // vendors); a caller of the service without one is refused rather than left half done.
    await expect(submitForReview(t.db, 'template', a.projectId, id, Date.now(), () => {})).rejects.toThrow(
      '向腾讯云短信提交审核尚未接入',
    );
    const after = await t.app.inject({
      url: `/api/project/${a.projectId}/sms/templates/${id}`,
      headers: owner,
    });
    expect(after.json().data.status).toBe('draft');
    await put({ provider: 'outbox', dailyCapPerNumber: 5 });
    expect(await smsProviderCredentials(t.db, loadAppSecret(testEnv()), a.projectId)).toEqual({
      provider: 'outbox',
    });
  });
});
