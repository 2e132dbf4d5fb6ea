import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../engine/clock';
import { VENDOR_PACER_WINDOW_MS } from './request-pacer';
import {
  createTencentSmsClient,
  parseTencentPush,
  TENCENT_SEND_SMS_MAX_RPS,
  type TencentFetch,
  toTencentTemplateContent,
} from './tencent';
import { TencentSmsError } from './tencent-errors';
import { TencentSmsServer } from './testing/tencent-sms-server';
import type { SmsSendRequest } from './types';

const credentials = {
  secretId: 'AKIDtestSecretId0123456789',
  secretKey: 'testSecretKey0123456789abcdef',
  sdkAppId: '1400006666',
  region: 'ap-guangzhou',
};

let server: TencentSmsServer;
beforeAll(async () => {
  server = await TencentSmsServer.start(credentials);
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

const client = (overrides: Partial<Parameters<typeof createTencentSmsClient>[0]> = {}) =>
  createTencentSmsClient({
    credentials,
    endpoint: { baseUrl: server.baseUrl },
    allowPrivate: true,
    ...overrides,
  });

const message = (phone: string, overrides: Partial<SmsSendRequest> = {}): SmsSendRequest => ({
  phone,
  signName: '云呼科技',
  templateCode: '1110',
  params: [
    { name: 'name', value: '张三' },
    { name: 'time', value: '明天 10:00' },
  ],
  outId: `sms-${phone}`,
  ...overrides,
});

describe('Tencent SMS client against the local server', () => {
  it('sends one message signed, with +86, the parameters in order and our id as SessionContext', async () => {
    const result = await client().send(message('13800138000'));
    expect(result).toEqual({ ok: true, providerMessageId: expect.stringMatching(/^2433:/) });
    const [request] = server.accepted('SendSms');
    expect(request?.headers['x-tc-version']).toBe('2021-01-11');
    expect(request?.headers['x-tc-region']).toBe('ap-guangzhou');
    expect(request?.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(request?.body).toEqual({
      PhoneNumberSet: ['+8613800138000'],
      SmsSdkAppId: '1400006666',
      SignName: '云呼科技',
      TemplateId: '1110',
      TemplateParamSet: ['张三', '明天 10:00'],
      SessionContext: 'sms-13800138000',
    });
  });

  it('is refused with AuthFailure.SignatureFailure when the key differs, reported as final', async () => {
    const result = await client({ credentials: { ...credentials, secretKey: 'wrong' } }).send(
      message('13800138000'),
    );
    expect(result).toMatchObject({ ok: false, code: 'AuthFailure.SignatureFailure', retryable: false });
    expect(result.ok === false && result.message).toContain('签名校验失败');
    expect(server.requests.at(-1)?.error).toBe('AuthFailure.SignatureFailure');
  });

  it('is refused when the body changes after signing: the signature covers the payload', async () => {
    const tampering: TencentFetch = (url, init) =>
      fetch(url, { ...init, body: init.body.replace('张三', '李四') });
    const result = await client({ fetchImpl: tampering }).send(message('13800138000'));
    expect(result).toMatchObject({ ok: false, code: 'AuthFailure.SignatureFailure' });
  });

  it('is refused with AuthFailure.SignatureExpire when the clock is off by more than 5 minutes', async () => {
    const skewed = new VirtualClock({ startAt: Date.now() - 10 * 60_000 });
    const result = await client({ clock: skewed }).send(message('13800138000'));
    expect(result).toMatchObject({ ok: false, code: 'AuthFailure.SignatureExpire', retryable: false });
  });

  it.each([
    ['LimitExceeded.PhoneNumberDailyLimit', false, '当日接收条数已达上限'],
    ['LimitExceeded.PhoneNumberThirtySecondLimit', true, '30 秒内'],
    ['InvalidParameterValue.IncorrectPhoneNumber', false, '手机号格式错误'],
    ['FailedOperation.SignatureIncorrectOrUnapproved', false, '签名未审核通过'],
    ['FailedOperation.TemplateIncorrectOrUnapproved', false, '模板未审核通过'],
    ['FailedOperation.InsufficientBalanceInSmsPackage', false, '套餐包余量不足'],
    ['FailedOperation.MarketingSendTimeConstraint', true, '8 点到 22 点'],
    ['RequestLimitExceeded', true, '请求频率'],
    ['InternalError.Timeout', true, '超时'],
    ['InternalError', true, '内部错误'],
    ['UnauthorizedOperation.SmsSdkAppIdVerifyFail', false, 'SmsSdkAppId'],
    ['LimitExceeded.SomethingNew', false, '超过上限'],
  ])('maps the API error %s (retryable %s)', async (code, retryable, zh) => {
    server.failNext(code, 'vendor says so');
    const result = await client().send(message('13800138000'));
    expect(result).toMatchObject({ ok: false, code, retryable });
    expect(result.ok === false && result.message).toContain(zh);
    expect(result.ok === false && result.message).toContain('vendor says so');
  });

  it('maps a failure inside SendStatusSet to that number only', async () => {
    server.failNumber('13900139000', 'LimitExceeded.PhoneNumberDailyLimit', 'phone number daily limit');
    const results = await client().sendBatch('1110', [message('13800138000'), message('13900139000')]);
    expect(results[0]).toMatchObject({ ok: true });
    expect(results[1]).toMatchObject({
      ok: false,
      code: 'LimitExceeded.PhoneNumberDailyLimit',
      retryable: false,
    });
    expect(server.accepted('SendSms')).toHaveLength(1);
  });

  it('reports throttling and a 500 as retryable without retrying itself', async () => {
    server.throttleNext();
    expect(await client().send(message('13800138000'))).toMatchObject({
      ok: false,
      code: 'RequestLimitExceeded',
      retryable: true,
    });
    server.serverErrorNext();
    expect(await client().send(message('13800138000'))).toMatchObject({
      ok: false,
      code: 'ClientError.Http500',
      retryable: true,
    });
    expect(server.requests).toHaveLength(2);
  });

  it('reports an unreachable endpoint as retryable', async () => {
    const result = await client({ endpoint: { baseUrl: 'http://127.0.0.1:1' } }).send(message('13800138000'));
    expect(result).toMatchObject({ ok: false, code: 'ClientError.Network', retryable: true });
  });

  it('refuses a private endpoint unless allowed', async () => {
    const result = await client({ allowPrivate: false }).send(message('13800138000'));
    expect(result).toMatchObject({ ok: false, code: 'ClientError.PrivateAddress' });
    expect(server.requests).toHaveLength(0);
  });

  it('splits a batch into requests of at most 200 numbers and groups by parameters', async () => {
    const phones = Array.from({ length: 450 }, (_, i) => `13${String(100000000 + i).padStart(9, '0')}`);
    const items = phones.map((phone) => message(phone));
    const other = message('13700137000', {
      params: [
        { name: 'name', value: '李四' },
        { name: 'time', value: '后天' },
      ],
    });
    const results = await client().sendBatch('1110', [...items, other]);
    expect(results).toHaveLength(451);
    expect(results.every((r) => r.ok)).toBe(true);
    const sizes = server.accepted('SendSms').map((r) => (r.body.PhoneNumberSet as string[]).length);
    expect(sizes.sort((a, b) => b - a)).toEqual([200, 200, 50, 1]);
    const lone = server.accepted('SendSms').find((r) => (r.body.PhoneNumberSet as string[]).length === 1);
    expect(lone?.body.TemplateParamSet).toEqual(['李四', '后天']);
    // Each result is the one Tencent gave that number.
    const serials = new Set(results.map((r) => (r.ok ? r.providerMessageId : '')));
    expect(serials.size).toBe(451);
  });

  it('fails every number of a request the API refused as a whole', async () => {
    server.failNext('FailedOperation.InsufficientBalanceInSmsPackage');
    const results = await client().sendBatch('1110', [message('13800138000'), message('13900139000')]);
    expect(results.map((r) => r.ok === false && r.code)).toEqual([
      'FailedOperation.InsufficientBalanceInSmsPackage',
      'FailedOperation.InsufficientBalanceInSmsPackage',
    ]);
  });

  it('queries the delivery of one message with PullSmsSendStatusByPhoneNumber', async () => {
    const c = client();
    const sentAt = new Date();
    const result = await c.send(message('13800138001'));
    if (!result.ok) throw new Error('send failed');
    expect(await c.querySendDetails('13800138001', result.providerMessageId, sentAt)).toBeNull();
    server.report(result.providerMessageId, 'FAIL', '用户手机关机');
    const receipt = await c.querySendDetails('13800138001', result.providerMessageId, sentAt);
    expect(receipt).toMatchObject({
      providerMessageId: result.providerMessageId,
      phone: '13800138001',
      outId: 'sms-13800138001',
      status: 'failed',
      errorMessage: '用户手机关机',
    });
    const pull = server.accepted('PullSmsSendStatusByPhoneNumber').at(-1);
    expect(pull?.body).toMatchObject({
      PhoneNumber: '+8613800138001',
      SmsSdkAppId: '1400006666',
      Offset: 0,
      Limit: 100,
    });
  });

  it('submits a signature and follows its review to approval', async () => {
    const c = client({ credentials: { ...credentials, qualificationId: '12345' } });
    const { providerRef } = await c.submitSignature({
      name: '云呼科技',
      source: 'enterprise',
      remark: '公司简称',
      proof: { fileName: 'licence.jpg', base64: 'data:image/jpeg;base64,/9j/4AAQ' },
    });
    expect(server.accepted('AddSmsSign').at(-1)?.body).toMatchObject({
      SignName: '云呼科技',
      SignType: 0,
      DocumentType: 0,
      International: 0,
      SignPurpose: 0,
      ProofImage: '/9j/4AAQ',
      QualificationId: 12345,
    });
    expect(await c.querySignature(providerRef)).toEqual({ status: 'reviewing', reason: null });
    server.review('sign', Number(providerRef), 2);
    expect(await c.querySignature(providerRef)).toEqual({ status: 'reviewing', reason: null });
    server.review('sign', Number(providerRef), 0);
    expect(await c.querySignature(providerRef)).toEqual({ status: 'approved', reason: null });
  });

  it('refuses signature sources Tencent no longer accepts, before any request', async () => {
    for (const source of ['website', 'official_account', 'mini_program', 'app'] as const) {
      await expect(
        client().submitSignature({
          name: '云呼科技',
          source,
          remark: '',
          proof: { fileName: 'a.jpg', base64: 'AA' },
        }),
      ).rejects.toMatchObject({ code: 'ClientError.UnsupportedSignatureSource' });
    }
    expect(server.requests).toHaveLength(0);
  });

  it('submits templates with numbered variables and their SmsType, and reads a rejection with its reason', async () => {
    const c = client();
    const { providerRef } = await c.submitTemplate({
      name: '预约提醒',
      type: 'notification',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: our template syntax, as text
      content: '您好${name}，您预约的${time}已确认，${name}请准时到店。',
      remark: '预约后通知',
    });
    expect(server.accepted('AddSmsTemplate').at(-1)?.body).toEqual({
      TemplateName: '预约提醒',
      TemplateContent: '您好{1}，您预约的{2}已确认，{1}请准时到店。',
      SmsType: 2,
      International: 0,
      Remark: '预约后通知',
    });
    server.review('template', Number(providerRef), -1, '变量内容不明确');
    expect(await c.queryTemplate(providerRef)).toEqual({ status: 'rejected', reason: '变量内容不明确' });

    // biome-ignore lint/suspicious/noTemplateCurlyInString: our template syntax, as text
    await c.submitTemplate({ name: '验证码', type: 'verification', content: '验证码${code}', remark: '' });
    await c.submitTemplate({ name: '活动', type: 'marketing', content: '活动开始，拒收请回复R', remark: '' });
    expect(server.accepted('AddSmsTemplate').map((r) => r.body.SmsType)).toEqual([2, 3, 1]);
  });

  it('throws the mapped error when a review action fails', async () => {
    server.failNext('FailedOperation.TemplateNumberLimit', 'template number limit');
    const failure = client().submitTemplate({ name: 'x', type: 'notification', content: 'x', remark: '' });
    await expect(failure).rejects.toBeInstanceOf(TencentSmsError);
    server.failNext('FailedOperation.TemplateNumberLimit', 'template number limit');
    await expect(
      client().submitTemplate({ name: 'x', type: 'notification', content: 'x', remark: '' }),
    ).rejects.toMatchObject({ code: 'FailedOperation.TemplateNumberLimit', retryable: false });
    await expect(client().queryTemplate('999999')).rejects.toMatchObject({
      code: 'FailedOperation.TemplateIdNotExist',
    });
  });
});

describe('send rate', () => {
  it("keeps to Tencent's documented 3000 SendSms per second by default", () => {
    expect(client().maxRequestsPerSecond).toBe(TENCENT_SEND_SMS_MAX_RPS);
    expect(TENCENT_SEND_SMS_MAX_RPS).toBe(3000);
  });

  it('never starts more than maxRequestsPerSecond sends in any second of a burst (virtual clock)', async () => {
    const clock = new VirtualClock({ startAt: Date.parse('2026-01-05T10:00:00+08:00') });
    const rateServer = await TencentSmsServer.start({ ...credentials, now: () => clock.now() });
    try {
      const started: number[] = [];
      const realFetch: TencentFetch = (url, init) => fetch(url, init);
      const fetchImpl: TencentFetch = (url, init) => {
        started.push(clock.now());
        return clock.track(realFetch(url, init));
      };
      const limited = createTencentSmsClient({
        credentials,
        endpoint: { baseUrl: rateServer.baseUrl },
        allowPrivate: true,
        clock,
        fetchImpl,
        maxRequestsPerSecond: 10,
      });
      const results = await clock.run(
        Promise.all(
          Array.from({ length: 35 }, (_, i) => limited.send(message(`1380013${String(i).padStart(4, '0')}`))),
        ),
      );
      expect(results.every((r) => r.ok)).toBe(true);
      expect(started).toHaveLength(35);
      const sorted = [...started].sort((a, b) => a - b);
      for (let i = 10; i < sorted.length; i++)
        expect((sorted[i] as number) - (sorted[i - 10] as number)).toBeGreaterThanOrEqual(1000);
      // Spread, not refused: 35 sends at 10 a window take three windows (a little over a second each).
      expect((sorted.at(-1) as number) - (sorted[0] as number)).toBe(3 * VENDOR_PACER_WINDOW_MS);
    } finally {
      await rateServer.close();
    }
  });
});

describe('Tencent pushes', () => {
  it('parses 短信下发状态回调 and answers {"result":0,"errmsg":"OK"}', () => {
    const parsed = parseTencentPush(
      'status',
      JSON.stringify([
        {
          user_receive_time: '2026-01-05 10:00:03',
          nationcode: '86',
          mobile: '13800138000',
          report_status: 'SUCCESS',
          errmsg: 'DELIVRD',
          description: '用户短信送达成功',
          sid: '2433:0001',
          ext: 'sms-1',
        },
        {
          user_receive_time: '2026-01-05 10:00:05',
          nationcode: '86',
          mobile: '13900139000',
          report_status: 'FAIL',
          errmsg: 'MK:0001',
          description: '空号',
          sid: '2433:0002',
        },
        { nonsense: true },
      ]),
    );
    expect(parsed.answer).toEqual({ status: 200, body: { result: 0, errmsg: 'OK' } });
    expect(parsed.receipts).toEqual([
      {
        providerMessageId: '2433:0001',
        phone: '13800138000',
        outId: 'sms-1',
        status: 'delivered',
        errorCode: null,
        errorMessage: null,
        reportedAt: new Date('2026-01-05T02:00:03Z'),
      },
      {
        providerMessageId: '2433:0002',
        phone: '13900139000',
        outId: null,
        status: 'failed',
        errorCode: 'MK:0001',
        errorMessage: '空号',
        reportedAt: new Date('2026-01-05T02:00:05Z'),
      },
    ]);
  });

  it("matches a pushed report to the send's SerialNo and our id", async () => {
    const result = await client().send(message('13800138002'));
    if (!result.ok) throw new Error('send failed');
    server.report(result.providerMessageId, 'FAIL', 'MK:0001 空号', Date.parse('2026-01-05T10:00:03+08:00'));
    const parsed = parseTencentPush('status', server.statusCallbackBody([result.providerMessageId]));
    expect(parsed.receipts).toEqual([
      {
        providerMessageId: result.providerMessageId,
        phone: '13800138002',
        outId: 'sms-13800138002',
        status: 'failed',
        errorCode: 'MK:0001',
        errorMessage: 'MK:0001 空号',
        reportedAt: new Date('2026-01-05T10:00:03+08:00'),
      },
    ]);
  });

  it('parses 短信回复 (an opt-out) and answers the same', () => {
    const parsed = parseTencentPush('reply', {
      extend: '',
      mobile: '13800138000',
      nationcode: '86',
      sign: '云呼科技',
      text: 'TD',
      time: 1767578400,
    });
    expect(parsed.answer).toEqual({ status: 200, body: { result: 0, errmsg: 'OK' } });
    expect(parsed.replies).toEqual([
      { phone: '13800138000', content: 'TD', receivedAt: new Date(1767578400 * 1000), signName: '云呼科技' },
    ]);
  });

  it('answers a body it cannot read with a failure so Tencent pushes again', () => {
    expect(parseTencentPush('status', 'not json').answer).toEqual({
      status: 400,
      body: { result: 1, errmsg: 'invalid status callback body' },
    });
    expect(parseTencentPush('reply', 42).answer.status).toBe(400);
  });
});

describe('template content', () => {
  it('numbers named variables by first appearance', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: our template syntax, as text
    expect(toTencentTemplateContent('${a}和${b}，再说${a}')).toBe('{1}和{2}，再说{1}');
  });
});
