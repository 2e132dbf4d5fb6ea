import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../engine/clock';
import {
  ALIYUN_BATCH_MAX,
  ALIYUN_PUSH_ANSWER,
  ALIYUN_SEND_QPS,
  AliyunSmsError,
  chinaDay,
  closeAliyunSmsAgents,
  createAliyunSmsClient,
  parseAliyunPush,
} from './aliyun-sms';
import { ALIYUN_SMS_ERRORS } from './aliyun-sms-errors';
import { RequestPacer, VENDOR_PACER_WINDOW_MS } from './request-pacer';
import { type FakeAliyunSms, startFakeAliyunSms } from './testing/aliyun-sms-server';
import type { SmsProviderClient, SmsSendRequest } from './types';

const AK_ID = 'LTAI5tSmsTestKeyId0001';
const AK_SECRET = 'smsSecret-0a1b2c3d4e5f6789';
const SIGN = '呼叫助手';
const TEMPLATE = 'SMS_460000001';
// biome-ignore lint/suspicious/noTemplateCurlyInString: an SMS template's ${variable}, as text
const TEMPLATE_TEXT = '您好${name}，您预约的门店地址：${address}。';

let aliyun: FakeAliyunSms;
beforeAll(async () => {
  aliyun = await startFakeAliyunSms({
    accessKeys: { [AK_ID]: AK_SECRET },
    signatures: [SIGN, '另一签名'],
    templates: { [TEMPLATE]: TEMPLATE_TEXT, SMS_460000002: '您的订单已发货。' },
  });
});
afterAll(async () => {
  await aliyun.close();
  await closeAliyunSmsAgents();
});
beforeEach(() => {
  aliyun.requests.length = 0;
});

const client = (over: { secret?: string; qualificationId?: number } = {}): SmsProviderClient =>
  createAliyunSmsClient({
    credentials: { accessKeyId: AK_ID, accessKeySecret: over.secret ?? AK_SECRET },
    endpoint: { baseUrl: aliyun.baseUrl },
    allowPrivate: true,
    qualificationId: over.qualificationId,
  });

/** A port nothing listens on: one the system just handed out and took back. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const request = (over: Partial<SmsSendRequest> = {}): SmsSendRequest => ({
  phone: '13800138000',
  signName: SIGN,
  templateCode: TEMPLATE,
  params: [
    { name: 'name', value: '王先生' },
    { name: 'address', value: '杭州市西湖区文三路 1 号' },
  ],
  outId: 'msg-1',
  ...over,
});

describe('SendSms', () => {
  it('sends a signed request the server verifies and answers with the BizId', async () => {
    const result = await client().send(request());
    expect(result.ok).toBe(true);
    const sent = aliyun.messages.at(-1);
    expect(result).toEqual({ ok: true, providerMessageId: sent?.bizId });
    expect(sent).toMatchObject({
      phone: '13800138000',
      signName: SIGN,
      templateCode: TEMPLATE,
      outId: 'msg-1',
    });
    expect(sent?.params).toEqual({ name: '王先生', address: '杭州市西湖区文三路 1 号' });
    const [recorded] = aliyun.requests;
    expect(recorded?.action).toBe('SendSms');
    expect(recorded?.headers['x-acs-version']).toBe('2017-05-25');
    expect(recorded?.headers.authorization).toMatch(/^ACS3-HMAC-SHA256 Credential=LTAI5tSmsTestKeyId0001,/);
  });

  it('omits TemplateParam for a template without variables', async () => {
    const result = await client().send(request({ templateCode: 'SMS_460000002', params: [] }));
    expect(result.ok).toBe(true);
    expect(aliyun.requests[0]?.params.TemplateParam).toBeUndefined();
  });

  it('maps the business errors Aliyun answers for bad input', async () => {
    const c = client();
    expect(await c.send(request({ phone: '1380013' }))).toMatchObject({
      ok: false,
      code: 'isv.MOBILE_NUMBER_ILLEGAL',
      retryable: false,
      message: expect.stringContaining('手机号码格式不正确'),
    });
    expect(await c.send(request({ signName: '未申请' }))).toMatchObject({
      ok: false,
      code: 'isv.SMS_SIGNATURE_ILLEGAL',
      retryable: false,
    });
    expect(await c.send(request({ templateCode: 'SMS_000' }))).toMatchObject({
      ok: false,
      code: 'isv.SMS_TEMPLATE_ILLEGAL',
      retryable: false,
    });
    expect(await c.send(request({ params: [{ name: 'name', value: '王先生' }] }))).toMatchObject({
      ok: false,
      code: 'isv.TEMPLATE_MISSING_PARAMETERS',
      message: expect.stringContaining('模板变量缺少取值'),
    });
  });

  it.each(
    Object.entries(ALIYUN_SMS_ERRORS).filter(([code]) => code.startsWith('isv.') || code.startsWith('isp.')),
  )('reports %s as Aliyun answers it (HTTP 200) in Chinese', async (code, meaning) => {
    aliyun.failNext({ code, message: `vendor says ${code}` });
    const result = await client().send(request());
    expect(result).toEqual({
      ok: false,
      code,
      message: `${meaning.zh}（${code}：vendor says ${code}）`,
      retryable: meaning.retryable,
    });
  });

  it('treats a day-level business limit as final and a minute-level one as retryable', async () => {
    aliyun.failNext({ code: 'isv.BUSINESS_LIMIT_CONTROL', message: '触发天级流控Permits:10' });
    expect(await client().send(request())).toMatchObject({ retryable: false });
    aliyun.failNext({ code: 'isv.BUSINESS_LIMIT_CONTROL', message: '触发分钟级流控Permits:1' });
    expect(await client().send(request())).toMatchObject({ retryable: true });
  });

  it('answers a wrong secret with the gateway SignatureDoesNotMatch (400), final', async () => {
    const result = await client({ secret: 'not-the-secret' }).send(request());
    expect(result).toEqual({
      ok: false,
      code: 'SignatureDoesNotMatch',
      message: 'AccessKey Secret 不正确，阿里云签名校验未通过（SignatureDoesNotMatch）',
      retryable: false,
    });
    expect(aliyun.requests[0]).toMatchObject({ status: 400, code: 'SignatureDoesNotMatch' });
    expect(JSON.stringify(result)).not.toContain(AK_SECRET);
  });

  it('answers an unknown AccessKey with InvalidAccessKeyId.NotFound (404)', async () => {
    const result = await createAliyunSmsClient({
      credentials: { accessKeyId: 'LTAI-unknown', accessKeySecret: AK_SECRET },
      endpoint: { baseUrl: aliyun.baseUrl },
      allowPrivate: true,
    }).send(request());
    expect(result).toMatchObject({ ok: false, code: 'InvalidAccessKeyId.NotFound', retryable: false });
    expect(aliyun.requests[0]?.status).toBe(404);
  });

  it('reports throttling, a 5xx and a refused connection as retryable; the client does not retry', async () => {
    aliyun.failNext({
      status: 400,
      code: 'Throttling.User',
      message: 'Request was denied due to user flow control.',
    });
    expect(await client().send(request())).toMatchObject({
      ok: false,
      code: 'Throttling.User',
      retryable: true,
    });
    aliyun.failNext({ status: 500, code: 'InternalError', message: 'The request processing has failed.' });
    expect(await client().send(request())).toMatchObject({
      ok: false,
      code: 'InternalError',
      retryable: true,
    });
    aliyun.failNext({ status: 503, code: '' });
    expect(await client().send(request())).toMatchObject({ ok: false, code: 'HTTP_503', retryable: true });
    expect(aliyun.requests).toHaveLength(3);

    const closed = createAliyunSmsClient({
      credentials: { accessKeyId: AK_ID, accessKeySecret: AK_SECRET },
      endpoint: { baseUrl: `http://127.0.0.1:${await closedPort()}` },
      allowPrivate: true,
    });
    expect(await closed.send(request())).toMatchObject({ ok: false, code: 'NETWORK', retryable: true });
  });

  it('is refused by the gateway for a clock 15 minutes off and for a reused nonce', async () => {
    const skewed = createAliyunSmsClient({
      credentials: { accessKeyId: AK_ID, accessKeySecret: AK_SECRET },
      endpoint: { baseUrl: aliyun.baseUrl },
      allowPrivate: true,
      now: () => Date.now() - 16 * 60_000,
    });
    expect(await skewed.send(request())).toMatchObject({
      code: 'InvalidTimeStamp.Expired',
      retryable: false,
    });
    const sameNonce = createAliyunSmsClient({
      credentials: { accessKeyId: AK_ID, accessKeySecret: AK_SECRET },
      endpoint: { baseUrl: aliyun.baseUrl },
      allowPrivate: true,
      nonce: () => 'fixed-nonce-for-replay-test',
    });
    expect(await sameNonce.send(request())).toMatchObject({ ok: true });
    expect(await sameNonce.send(request())).toMatchObject({
      ok: false,
      code: 'SignatureNonceUsed',
      retryable: true,
    });
  });

  it('refuses a private endpoint unless allowed', async () => {
    const guarded = createAliyunSmsClient({
      credentials: { accessKeyId: AK_ID, accessKeySecret: AK_SECRET },
      endpoint: { baseUrl: aliyun.baseUrl },
    });
    expect(await guarded.send(request())).toMatchObject({
      ok: false,
      code: 'PRIVATE_ADDRESS',
      retryable: false,
    });
    expect(aliyun.requests).toHaveLength(0);
  });
});

describe('SendBatchSms', () => {
  it('splits a batch into calls of at most 100 numbers, one BizId per call', async () => {
    const items = Array.from({ length: 230 }, (_, i) => ({
      phone: `139${String(i).padStart(8, '0')}`,
      signName: i % 2 ? SIGN : '另一签名',
      params: [
        { name: 'name', value: `客户${i}` },
        { name: 'address', value: '文三路' },
      ],
      outId: `m${i}`,
    }));
    const results = await client().sendBatch(TEMPLATE, items);
    expect(results).toHaveLength(230);
    expect(results[0]).toMatchObject({ ok: true });
    expect(aliyun.requests.map((r) => r.action)).toEqual(['SendBatchSms', 'SendBatchSms', 'SendBatchSms']);
    expect(aliyun.requests.map((r) => JSON.parse(r.params.PhoneNumberJson as string).length)).toEqual([
      ALIYUN_BATCH_MAX,
      ALIYUN_BATCH_MAX,
      30,
    ]);
    const ids = results.map((r) => (r.ok ? r.providerMessageId : null));
    expect(new Set(ids).size).toBe(3);
    expect(ids[0]).toBe(ids[99]);
    expect(ids[100]).not.toBe(ids[99]);
    const m7 = aliyun.messages.find((m) => m.phone === '13900000007');
    expect(m7).toMatchObject({ signName: SIGN, params: { name: '客户7', address: '文三路' } });
  });

  it('fails only the call that failed', async () => {
    aliyun.failNext({ code: 'isv.AMOUNT_NOT_ENOUGH', message: '账户余额不足' });
    const items = Array.from({ length: 150 }, (_, i) => ({
      phone: `137${String(i).padStart(8, '0')}`,
      signName: SIGN,
      params: [],
      outId: `b${i}`,
    }));
    const results = await client().sendBatch('SMS_460000002', items);
    expect(results.slice(0, 100).every((r) => !r.ok && r.code === 'isv.AMOUNT_NOT_ENOUGH')).toBe(true);
    expect(results.slice(100).every((r) => r.ok)).toBe(true);
    expect(aliyun.requests[1]?.params.TemplateParamJson).toBeUndefined();
  });
});

describe('QuerySendDetails', () => {
  it('reads waiting, delivered and failed states', async () => {
    const c = client();
    const sentAt = new Date();
    const first = await c.send(request({ phone: '13600000001' }));
    const second = await c.send(request({ phone: '13600000002' }));
    if (!first.ok || !second.ok) throw new Error('send failed');
    expect(await c.querySendDetails('13600000001', first.providerMessageId, sentAt)).toBeNull();
    const query = aliyun.requests.at(-1);
    expect(query?.params).toMatchObject({
      PhoneNumber: '13600000001',
      BizId: first.providerMessageId,
      SendDate: chinaDay(sentAt.getTime()),
    });

    aliyun.deliver(first.providerMessageId, '13600000001', { success: true });
    aliyun.deliver(second.providerMessageId, '13600000002', { success: false, errCode: 'MK:0001' });
    expect(await c.querySendDetails('13600000001', first.providerMessageId, sentAt)).toMatchObject({
      providerMessageId: first.providerMessageId,
      phone: '13600000001',
      outId: 'msg-1',
      status: 'delivered',
      errorCode: null,
    });
    const failed = await c.querySendDetails('13600000002', second.providerMessageId, sentAt);
    expect(failed).toMatchObject({ status: 'failed', errorCode: 'MK:0001' });
    // Aliyun writes China time to the second: the receipt's time is within a second of now.
    expect(Math.abs((failed?.reportedAt.getTime() ?? 0) - Date.now())).toBeLessThan(2000);
  });

  it('throws a query failure as an AliyunSmsError', async () => {
    aliyun.failNext({ status: 400, code: 'Throttling.Api' });
    const err = await client()
      .querySendDetails('13600000001', 'x', new Date())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AliyunSmsError);
    expect(err).toMatchObject({ code: 'Throttling.Api', retryable: true, status: 400 });
  });

  it('asks for the China calendar day', () => {
    expect(chinaDay(Date.parse('2026-03-01T15:59:59Z'))).toBe('20260301');
    expect(chinaDay(Date.parse('2026-03-01T16:00:00Z'))).toBe('20260302');
  });
});

describe('signatures and templates (CreateSmsSign / GetSmsSign, CreateSmsTemplate / GetSmsTemplate)', () => {
  it('submits a signature with its qualification and reads its review', async () => {
    const c = client({ qualificationId: 8563 });
    const { providerRef } = await c.submitSignature({
      name: '云呼科技',
      source: 'enterprise',
      remark: '预约提醒',
      proof: null,
    });
    expect(providerRef).toBe('云呼科技');
    expect(aliyun.requests.at(-1)?.params).toMatchObject({
      SignSource: '0',
      SignType: '1',
      QualificationId: '8563',
      ThirdParty: 'false',
    });
    expect(await c.querySignature(providerRef)).toEqual({ status: 'reviewing', reason: null });
    aliyun.review('sign', providerRef, 2, '通过资质信息，不能判断是否可以申请此签名。');
    expect(await c.querySignature(providerRef)).toEqual({
      status: 'rejected',
      reason: '通过资质信息，不能判断是否可以申请此签名。',
    });
    aliyun.review('sign', providerRef, 1);
    expect(await c.querySignature(providerRef)).toEqual({ status: 'approved', reason: null });
    aliyun.review('sign', providerRef, 10);
    expect(await c.querySignature(providerRef)).toMatchObject({ status: 'rejected' });
  });

  it('uploads a proof file through the OSS policy Aliyun hands out and names it in MoreData', async () => {
    const c = client({ qualificationId: 8563 });
    const proof = Buffer.from('%PDF-1.4 营业执照');
    await c.submitSignature({
      name: '云呼到家',
      source: 'enterprise',
      remark: '',
      proof: { fileName: '营业执照 scan.pdf', base64: proof.toString('base64') },
    });
    expect(aliyun.requests.map((r) => r.action)).toEqual([
      'GetOSSInfoForUploadFile',
      'OSS PostObject',
      'CreateSmsSign',
    ]);
    const keys = aliyun.signatures.get('云呼到家')?.moreData ?? [];
    expect(keys).toHaveLength(1);
    expect(JSON.parse(aliyun.requests[2]?.params.MoreData as string)).toEqual(keys);
    expect(aliyun.uploads.get(keys[0] as string)).toEqual(proof);
  });

  it('maps app and trademark sources to their registered entities and refuses the retired ones', async () => {
    const c = client({ qualificationId: 1 });
    await c.submitSignature({
      name: '云呼商标',
      source: 'trademark',
      remark: '',
      proof: null,
      aliyun: { trademarkId: 77 },
    });
    expect(aliyun.requests.at(-1)?.params).toMatchObject({ SignSource: '5', TrademarkId: '77' });
    await expect(
      c.submitSignature({ name: '云呼App', source: 'app', remark: '', proof: null }),
    ).rejects.toMatchObject({
      code: 'MISSING_APP_ICP_RECORD',
    });
    await expect(
      c.submitSignature({ name: '云呼网', source: 'website', remark: '', proof: null }),
    ).rejects.toMatchObject({
      code: 'UNSUPPORTED_SIGN_SOURCE',
    });
    await expect(
      client().submitSignature({ name: '云呼科技', source: 'enterprise', remark: '', proof: null }),
    ).rejects.toMatchObject({
      code: 'MISSING_QUALIFICATION',
    });
  });

  it('submits templates with their type, related signature and variable rules, and reads their review', async () => {
    const c = client();
    const verification = await c.submitTemplate({
      name: '登录验证码',
      type: 'verification',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: an SMS template's ${variable}, as text
      content: '您的验证码为${code}，5分钟内有效。',
      remark: '登录',
      signName: SIGN,
    });
    expect(aliyun.requests.at(-1)?.params).toMatchObject({
      TemplateType: '0',
      RelatedSignName: SIGN,
      TemplateRule: '{"code":"numberCaptcha"}',
    });
    const marketing = await c.submitTemplate({
      name: '活动',
      type: 'marketing',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: an SMS template's ${variable}, as text
      content: '${name}您好，本周到店享九折，拒收请回复R',
      remark: '',
      signName: SIGN,
    });
    expect(aliyun.requests.at(-1)?.params).toMatchObject({
      TemplateType: '2',
      TemplateRule: '{"name":"others"}',
    });
    expect(await c.queryTemplate(verification.providerRef)).toEqual({ status: 'reviewing', reason: null });
    aliyun.review('template', marketing.providerRef, 2, '模板内容中包含错别字。');
    expect(await c.queryTemplate(marketing.providerRef)).toEqual({
      status: 'rejected',
      reason: '模板内容中包含错别字。',
    });
    aliyun.review('template', verification.providerRef, 1);
    expect(await c.queryTemplate(verification.providerRef)).toEqual({ status: 'approved', reason: null });
  });
});

describe('rate', () => {
  it('keeps to the documented SendSms QPS by default', () => {
    expect(client().maxRequestsPerSecond).toBe(ALIYUN_SEND_QPS);
  });

  it('never lets more than the rate through in any one-second window, on a virtual clock', async () => {
    const clock = new VirtualClock();
    const starts: number[] = [];
    const window = new RequestPacer(5, clock);
    await clock.run(
      Promise.all(
        Array.from({ length: 23 }, async () => {
          await window.take();
          starts.push(clock.now());
        }),
      ),
    );
    expect(starts).toHaveLength(23);
    for (const s of starts)
      expect(starts.filter((x) => x > s - 1000 && x <= s).length).toBeLessThanOrEqual(5);
    // 23 at 5 per second: the last four seconds after the first.
    expect(Math.max(...starts) - Math.min(...starts)).toBe(4000);
  });

  it('counts when requests really start, so sleepers woken late do not crowd one window', async () => {
    const clock = new VirtualClock();
    // A busy event loop: the first three sleeps of the run wake 800 ms late.
    let lateWakes = 3;
    const laggy = {
      now: () => clock.now(),
      sleep: (ms: number, signal?: AbortSignal) => clock.sleep(ms + (lateWakes-- > 0 ? 800 : 0), signal),
    };
    const starts: number[] = [];
    const window = new RequestPacer(5, laggy as typeof clock);
    await clock.run(
      Promise.all(
        Array.from({ length: 30 }, async () => {
          await window.take();
          starts.push(clock.now());
        }),
      ),
    );
    expect(starts).toHaveLength(30);
    for (const s of starts)
      expect(starts.filter((x) => x > s - 1000 && x <= s).length).toBeLessThanOrEqual(5);
  });

  it('a client with a lower rate paces its sends on the injected clock', async () => {
    const clock = new VirtualClock();
    const stamps: number[] = [];
    const c = createAliyunSmsClient({
      credentials: { accessKeyId: AK_ID, accessKeySecret: AK_SECRET },
      endpoint: { baseUrl: 'https://dysmsapi.aliyuncs.com' },
      maxRequestsPerSecond: 2,
      now: () => clock.now(),
      sleep: (ms) => clock.sleep(ms),
      fetchImpl: async () => {
        stamps.push(clock.now());
        return { status: 200, text: async () => '{"Code":"OK","BizId":"1^0","RequestId":"r"}' };
      },
    });
    expect(c.maxRequestsPerSecond).toBe(2);
    const results = await clock.run(
      Promise.all(Array.from({ length: 7 }, (_, i) => c.send(request({ outId: `r${i}` })))),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(stamps).toHaveLength(7);
    for (const s of stamps)
      expect(stamps.filter((x) => x > s - 1000 && x <= s).length).toBeLessThanOrEqual(2);
    // Seven at two a window: three windows after the first (each a little over a second, for the lag).
    expect(Math.max(...stamps) - Math.min(...stamps)).toBe(3 * VENDOR_PACER_WINDOW_MS);
  });
});

describe('delivery-receipt and reply push', () => {
  it('parses what Aliyun pushes for delivered and failed messages and answers as it expects', async () => {
    const c = client();
    const ok = await c.send(request({ phone: '13500000001', outId: 'push-1' }));
    const bad = await c.send(request({ phone: '13500000002', outId: 'push-2' }));
    if (!ok.ok || !bad.ok) throw new Error('send failed');
    aliyun.deliver(ok.providerMessageId, '13500000001', { success: true });
    aliyun.deliver(bad.providerMessageId, '13500000002', { success: false, errCode: 'DB:0141' });
    const pushed = aliyun.reportPush().filter((r) => String(r.out_id).startsWith('push-'));
    const parsed = parseAliyunPush('SmsReport', JSON.stringify(pushed));
    expect(parsed.answer).toEqual({ status: 200, body: ALIYUN_PUSH_ANSWER });
    expect(ALIYUN_PUSH_ANSWER).toEqual({ code: 0, msg: '成功' });
    expect(parsed.receipts).toEqual([
      expect.objectContaining({
        providerMessageId: ok.providerMessageId,
        phone: '13500000001',
        outId: 'push-1',
        status: 'delivered',
        errorCode: null,
      }),
      expect.objectContaining({
        providerMessageId: bad.providerMessageId,
        outId: 'push-2',
        status: 'failed',
        errorCode: 'DB:0141',
        errorMessage: '失败',
      }),
    ]);
  });

  it('reads the documented SmsReport example, times in China time', () => {
    const parsed = parseAliyunPush('SmsReport', [
      {
        phone_number: '13900000001',
        send_time: '2017-01-01 11:12:13',
        report_time: '2017-02-02 22:23:24',
        success: true,
        err_code: 'DELIVERED',
        err_msg: '用户接收成功',
        sms_size: '1',
        biz_id: '12345',
        out_id: '67890',
      },
    ]);
    expect(parsed.receipts[0]).toEqual({
      providerMessageId: '12345',
      phone: '13900000001',
      outId: '67890',
      status: 'delivered',
      errorCode: null,
      errorMessage: null,
      reportedAt: new Date('2017-02-02T14:23:24Z'),
    });
  });

  it('reads replies (SmsUp) for opt-out handling', () => {
    const parsed = parseAliyunPush('SmsUp', [
      {
        phone_number: '13900000001',
        send_time: '2017-01-01 11:12:13',
        content: 'TD',
        sign_name: SIGN,
        dest_code: '1234',
        sequence_id: 1234567,
      },
      { content: 'no phone' },
    ]);
    expect(parsed.replies).toEqual([
      { phone: '13900000001', content: 'TD', receivedAt: new Date('2017-01-01T03:12:13Z'), signName: SIGN },
    ]);
    expect(parsed.answer).toEqual({ status: 200, body: { code: 0, msg: '成功' } });
  });

  it('refuses a body that is not a JSON array', () => {
    expect(parseAliyunPush('SmsReport', '{"not":"an array"}').answer.status).toBe(400);
    expect(parseAliyunPush('SmsUp', 'not json').answer.status).toBe(400);
  });
});
