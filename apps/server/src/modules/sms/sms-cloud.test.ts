// biome-ignore-all lint/suspicious/noTemplateCurlyInString: SMS templates write their variables as ${name}.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import {
  smsMessages,
  smsOptOuts,
  smsReplies,
  smsSignatures,
  smsTemplates,
  webhookDeliveries,
  webhookEndpoints,
} from '../../db/schema';
import { type FakeAliyunSms, startFakeAliyunSms } from './providers/testing/aliyun-sms-server';
import { TencentSmsServer } from './providers/testing/tencent-sms-server';

/**
 * Cloud providers wired in, against the local fake servers that check each vendor's signature
 * exactly as the vendor does: review through the provider and the review poller, receipts and
 * replies pushed in each vendor's format, the receipt poller, the per-project client resolver.
 */

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;

const ALI_KEY = 'LTAI5tCloudWiring01';
const ALI_SECRET = 'aliyun-secret-cloud-4f3e2d1c0b';
const TC_ID = 'AKIDcloudWiring0123456789';
const TC_KEY = 'tencent-key-cloud-8a7b6c5d4e';
const SDK_APP_ID = '1400123456';
const SENT_SIGN = '云呼发送';
const SENT_TEMPLATE = 'SMS_100000001';

let t: TestApp;
let aliyun: FakeAliyunSms;
let tencent: TencentSmsServer;
const logs: string[] = [];
const bodies: string[] = [];
let a: { userId: string; projectId: string };
let b: { userId: string; projectId: string };
let ownerA: Headers;
let ownerB: Headers;

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);

async function send(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  headers: Headers,
  payload?: unknown,
) {
  const res = await t.app.inject({
    method,
    url,
    headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  bodies.push(res.body);
  return res;
}

async function upload(url: string, headers: Headers) {
  const boundary = '----sms-proof';
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="执照.png"\r\nContent-Type: image/png\r\n\r\n`,
    ),
    PNG,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const res = await t.app.inject({
    method: 'POST',
    url,
    headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: body,
  });
  bodies.push(res.body);
  return res;
}

const sms = (projectId: string) => `/api/project/${projectId}/sms`;
const runtime = () => t.app.runtime;

beforeAll(async () => {
  aliyun = await startFakeAliyunSms({
    accessKeys: { [ALI_KEY]: ALI_SECRET },
    signatures: [SENT_SIGN],
    templates: { [SENT_TEMPLATE]: '您的订单${order}已发货' },
  });
  tencent = await TencentSmsServer.start({ secretId: TC_ID, secretKey: TC_KEY, sdkAppId: SDK_APP_ID });
  t = await createTestApp({
    logger: { level: 'trace', stream: { write: (line: string) => logs.push(line) } },
    sms: {
      endpoints: { aliyun: { baseUrl: aliyun.baseUrl }, tencent: { baseUrl: tencent.baseUrl } },
      allowPrivate: true,
      // The tests run the pollers' rounds themselves.
      reviewPollMs: 3_600_000,
      receiptPoll: { intervalMs: 3_600_000, afterMs: 5 * 60_000, everyMs: 10 * 60_000 },
    },
  });
  a = await seedUser(t.db, { email: 'aliyun@example.com' });
  b = await seedUser(t.db, { email: 'tencent@example.com' });
  ownerA = await loginAs(t.app, 'aliyun@example.com');
  ownerB = await loginAs(t.app, 'tencent@example.com');
  const savedA = await send('PUT', `${sms(a.projectId)}/settings`, ownerA, {
    provider: 'aliyun',
    accessKeyId: ALI_KEY,
    accessKeySecret: ALI_SECRET,
    qualificationId: '10001',
    dailyCapPerNumber: 5,
  });
  expect(savedA.statusCode, savedA.body).toBe(200);
  const savedB = await send('PUT', `${sms(b.projectId)}/settings`, ownerB, {
    provider: 'tencent',
    secretId: TC_ID,
    secretKey: TC_KEY,
    sdkAppId: SDK_APP_ID,
    region: 'ap-guangzhou',
    dailyCapPerNumber: 5,
  });
  expect(savedB.statusCode, savedB.body).toBe(200);
});

afterAll(async () => {
  await t?.app.close();
  await aliyun?.close();
  await tencent?.close();
});

async function signatureFor(projectId: string, headers: Headers, name: string) {
  const made = await send('POST', `${sms(projectId)}/signatures`, headers, {
    name,
    source: 'enterprise',
    remark: '公司全称',
  });
  expect(made.statusCode, made.body).toBe(200);
  const url = `${sms(projectId)}/signatures/${made.json().data.id}`;
  expect((await upload(`${url}/proof`, headers)).statusCode).toBe(200);
  return { id: made.json().data.id as string, url };
}

async function templateFor(projectId: string, headers: Headers, name: string) {
  const made = await send('POST', `${sms(projectId)}/templates`, headers, {
    name,
    type: 'notification',
    content: '${name}您好，您预约的${service}将于${time}开始，请准时到达。',
  });
  expect(made.statusCode, made.body).toBe(200);
  return { id: made.json().data.id as string, url: `${sms(projectId)}/templates/${made.json().data.id}` };
}

const refOf = async (table: typeof smsSignatures | typeof smsTemplates, id: string) =>
  (await t.db.select().from(table).where(eq(table.id, id)))[0];

describe('review through the cloud provider', () => {
  it('Aliyun: signature and template go to review there, the poller applies approval and rejection', async () => {
    const sig = await signatureFor(a.projectId, ownerA, '云呼科技');
    // A template needs an approved Aliyun signature to relate to (RelatedSignName): refused before one exists.
    const tpl = await templateFor(a.projectId, ownerA, '预约提醒');
    const early = await send('POST', `${tpl.url}/submit`, ownerA);
    expect(early.statusCode).toBe(409);
    expect(early.json().message).toContain('已通过审核的阿里云签名');

    const submitted = await send('POST', `${sig.url}/submit`, ownerA);
    expect(submitted.statusCode, submitted.body).toBe(200);
    expect(submitted.json().data).toMatchObject({ status: 'reviewing', provider: 'aliyun' });
    const sent = aliyun.signatures.get('云呼科技');
    expect(sent?.moreData).toHaveLength(1);
    // The proof went up to OSS as the file's bytes.
    expect(aliyun.uploads.get(sent?.moreData[0] as string)).toEqual(PNG);
    expect((await refOf(smsSignatures, sig.id))?.providerRef).toBe('云呼科技');

    // No withdrawal API at Aliyun: said so, nothing changes.
    const withdraw = await send('POST', `${sig.url}/withdraw`, ownerA);
    expect(withdraw.statusCode).toBe(409);
    expect(withdraw.json().message).toContain('阿里云短信控制台取消审核');

    expect(await runtime().sms.pollers.reviews.poll()).toBe(0);
    aliyun.review('sign', '云呼科技', 1);
    expect(await runtime().sms.pollers.reviews.poll()).toBe(1);
    expect((await send('GET', sig.url, ownerA)).json().data.status).toBe('approved');

    const tplSubmitted = await send('POST', `${tpl.url}/submit`, ownerA);
    expect(tplSubmitted.statusCode, tplSubmitted.body).toBe(200);
    const code = (await refOf(smsTemplates, tpl.id))?.providerRef as string;
    expect(code).toMatch(/^SMS_\d+$/);
    const request = aliyun.requests.filter((r) => r.action === 'CreateSmsTemplate').at(-1);
    expect(request?.params).toMatchObject({ RelatedSignName: '云呼科技', TemplateType: '1' });
    aliyun.review('template', code, 2, '模板变量缺少说明');
    expect(await runtime().sms.pollers.reviews.poll()).toBe(1);
    expect((await send('GET', tpl.url, ownerA)).json().data).toMatchObject({
      status: 'rejected',
      rejectReason: '模板变量缺少说明',
    });
  });

  it('Aliyun: a refusal is a clear 400 and changes nothing', async () => {
    const sig = await signatureFor(a.projectId, ownerA, '云呼拒绝');
    aliyun.failNext({ code: 'isv.SIGN_COUNT_OVER_LIMIT', message: 'sign count over limit' });
    const refused = await send('POST', `${sig.url}/submit`, ownerA);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toContain('阿里云短信拒绝了请求：签名数量超过上限');
    expect((await refOf(smsSignatures, sig.id))?.status).toBe('draft');
  });

  it('Tencent: submitted there, approved and rejected with the reason; a vendor fault is a 502', async () => {
    const sig = await signatureFor(b.projectId, ownerB, '腾讯呼叫');
    tencent.serverErrorNext();
    const fault = await send('POST', `${sig.url}/submit`, ownerB);
    expect(fault.statusCode).toBe(502);
    expect(fault.json().message).toContain('腾讯云短信暂时无法处理请求');
    expect((await refOf(smsSignatures, sig.id))?.status).toBe('draft');

    // A source Tencent no longer takes is refused before anything is sent, saying why.
    const app = await send('POST', `${sms(b.projectId)}/signatures`, ownerB, {
      name: '腾讯应用',
      source: 'app',
    });
    const appUrl = `${sms(b.projectId)}/signatures/${app.json().data.id}`;
    await upload(`${appUrl}/proof`, ownerB);
    const unsupported = await send('POST', `${appUrl}/submit`, ownerB);
    expect(unsupported.statusCode).toBe(400);
    expect(unsupported.json().message).toContain('无法提交到腾讯云短信：腾讯云已不再受理来源为「App」');
    expect((await send('GET', appUrl, ownerB)).json().data.status).toBe('draft');

    const submitted = await send('POST', `${sig.url}/submit`, ownerB);
    expect(submitted.statusCode, submitted.body).toBe(200);
    const signId = Number((await refOf(smsSignatures, sig.id))?.providerRef);
    expect(tencent.signs.get(signId)?.name).toBe('腾讯呼叫');
    const withdraw = await send('POST', `${sig.url}/withdraw`, ownerB);
    expect(withdraw.statusCode).toBe(409);
    expect(withdraw.json().message).toContain('腾讯云');

    const tpl = await templateFor(b.projectId, ownerB, '到店提醒');
    expect((await send('POST', `${tpl.url}/submit`, ownerB)).json().data.status).toBe('reviewing');
    const templateId = Number((await refOf(smsTemplates, tpl.id))?.providerRef);
    // Named variables become Tencent's numbered ones.
    expect(tencent.templates.get(templateId)?.body.TemplateContent).toBe(
      '{1}您好，您预约的{2}将于{3}开始，请准时到达。',
    );

    tencent.review('sign', signId, 0);
    tencent.review('template', templateId, -1, '模板内容与业务场景不符');
    expect(await runtime().sms.pollers.reviews.poll()).toBe(2);
    expect((await send('GET', sig.url, ownerB)).json().data.status).toBe('approved');
    expect((await send('GET', tpl.url, ownerB)).json().data).toMatchObject({
      status: 'rejected',
      rejectReason: '模板内容与业务场景不符',
    });
  });
});

/** A message really sent through the project's client, recorded as the sending worker would. */
async function sentMessage(projectId: string, phone: string, submittedAgoMs = 0) {
  const client = await runtime().sms.clients(projectId);
  const id = randomUUID();
  const result =
    client.kind === 'aliyun'
      ? await client.send({
          phone,
          signName: SENT_SIGN,
          templateCode: SENT_TEMPLATE,
          params: [{ name: 'order', value: 'A1' }],
          outId: id,
        })
      : await client.send({
          phone,
          signName: '腾讯呼叫',
          templateCode: '1001',
          params: [{ name: 'order', value: 'A1' }],
          outId: id,
        });
  expect(result.ok, JSON.stringify(result)).toBe(true);
  const submittedAt = new Date(Date.now() - submittedAgoMs);
  await t.db.insert(smsMessages).values({
    id,
    projectId,
    phone,
    signatureName: SENT_SIGN,
    templateName: '发货通知',
    templateType: 'notification',
    content: `【${SENT_SIGN}】您的订单A1已发货`,
    provider: client.kind,
    providerMessageId: result.ok ? result.providerMessageId : null,
    status: 'submitted',
    source: 'single',
    submittedAt,
    timeline: [{ status: 'submitted', at: submittedAt.toISOString(), detail: null }],
  });
  return { id, providerMessageId: result.ok ? result.providerMessageId : '' };
}

const messageRow = async (id: string) =>
  (await t.db.select().from(smsMessages).where(eq(smsMessages.id, id)))[0];

async function pushUrls(projectId: string, headers: Headers) {
  const view = (await send('GET', `${sms(projectId)}/settings`, headers)).json().data;
  const path = (url: string) => new URL(url).pathname;
  return { receipts: path(view.pushUrls.receipts), replies: path(view.pushUrls.replies) };
}

const push = async (url: string, payload: unknown) => {
  const res = await t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  bodies.push(res.body);
  return res;
};

describe('receipts and replies pushed by the vendor', () => {
  it('Aliyun: a failed receipt records the reason and emits sms.delivered once; a wrong token is 404', async () => {
    await t.db.insert(webhookEndpoints).values({
      id: randomUUID(),
      projectId: a.projectId,
      url: 'https://hooks.example.com/sms',
      events: ['sms.delivered'],
      secret: 'sealed',
    });
    const urls = await pushUrls(a.projectId, ownerA);
    expect(urls.receipts).toMatch(new RegExp(`^/api/sms-push/aliyun/${a.projectId}/[\\w-]{43}/receipts$`));
    const msg = await sentMessage(a.projectId, '13800138001');
    aliyun.deliver(msg.providerMessageId, '13800138001', { success: false, errCode: 'isv.OUT_OF_SERVICE' });
    const body = aliyun.reportPush();

    const wrong = await push(urls.receipts.replace(/\/[\w-]{43}\//, `/${'x'.repeat(43)}/`), body);
    expect(wrong.statusCode).toBe(404);
    const otherProject = await push(urls.receipts.replace(a.projectId, b.projectId), body);
    expect(otherProject.statusCode).toBe(404);
    expect((await messageRow(msg.id))?.status).toBe('submitted');

    const res = await push(urls.receipts, body);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ code: 0, msg: '成功' });
    const row = await messageRow(msg.id);
    expect(row).toMatchObject({ status: 'failed', errorCode: 'isv.OUT_OF_SERVICE' });
    expect(row?.errorMessage).toContain('阿里云账户业务停机（余额不足），请充值');
    expect(row?.finishedAt).not.toBeNull();
    expect(row?.timeline).toHaveLength(2);

    const again = await push(urls.receipts, body);
    expect(again.json()).toEqual({ code: 0, msg: '成功' });
    expect((await messageRow(msg.id))?.timeline).toHaveLength(2);
    const events = await t.db
      .select()
      .from(webhookDeliveries)
      .where(
        and(eq(webhookDeliveries.projectId, a.projectId), eq(webhookDeliveries.eventType, 'sms.delivered')),
      );
    expect(events).toHaveLength(1);
    expect(JSON.stringify(events[0]?.payload)).toContain(msg.id);
  });

  it('Tencent: a delivered and a failed receipt in one callback, matched by SerialNo', async () => {
    const urls = await pushUrls(b.projectId, ownerB);
    const ok = await sentMessage(b.projectId, '13900139001');
    const bad = await sentMessage(b.projectId, '13900139002');
    tencent.report(ok.providerMessageId, 'SUCCESS', '用户短信送达成功');
    tencent.report(bad.providerMessageId, 'FAIL', 'MK:0001 空号');
    const res = await push(
      urls.receipts,
      tencent.statusCallbackBody([ok.providerMessageId, bad.providerMessageId]),
    );
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ result: 0, errmsg: 'OK' });
    expect(await messageRow(ok.id)).toMatchObject({ status: 'delivered', errorCode: null });
    expect(await messageRow(bad.id)).toMatchObject({ status: 'failed', errorCode: 'MK:0001' });
    expect((await messageRow(bad.id))?.errorMessage).toBe(
      '号码状态异常（空号、停机、关机或无法接通）（MK:0001 空号）',
    );
    // An unreadable body is refused in Tencent's format so it pushes again.
    const unreadable = await push(urls.receipts, 'not json');
    expect(unreadable.statusCode).toBe(400);
  });

  it('replies are stored; T and 退订 put the number on the do-not-disturb list', async () => {
    const aliUrls = await pushUrls(a.projectId, ownerA);
    const up = [
      { phone_number: '13800138011', content: 'T', sign_name: SENT_SIGN, send_time: '2026-11-24 10:00:00' },
      {
        phone_number: '13800138012',
        content: '好的，谢谢',
        sign_name: SENT_SIGN,
        send_time: '2026-11-24 10:01:00',
      },
    ];
    expect((await push(aliUrls.replies, up)).json()).toEqual({ code: 0, msg: '成功' });
    // Pushed again (our answer lost): stored once.
    await push(aliUrls.replies, up);
    const aliReplies = await t.db.select().from(smsReplies).where(eq(smsReplies.projectId, a.projectId));
    expect(aliReplies.map((r) => r.content).sort()).toEqual(['T', '好的，谢谢'].sort());
    const aliOptOuts = await t.db.select().from(smsOptOuts).where(eq(smsOptOuts.projectId, a.projectId));
    expect(aliOptOuts).toMatchObject([{ phone: '13800138011', source: 'reply', reply: 'T' }]);

    const tcUrls = await pushUrls(b.projectId, ownerB);
    const reply = {
      extend: '',
      mobile: '13900139011',
      nationcode: '86',
      sign: '腾讯呼叫',
      text: '退订',
      time: 1_795_000_000,
    };
    expect((await push(tcUrls.replies, reply)).json()).toEqual({ result: 0, errmsg: 'OK' });
    const tcOptOuts = await t.db.select().from(smsOptOuts).where(eq(smsOptOuts.projectId, b.projectId));
    expect(tcOptOuts).toMatchObject([{ phone: '13900139011', source: 'reply', reply: '退订' }]);
  });
});

describe('the sending worker through the cloud client', () => {
  it('sends a queued message with the approved Aliyun template; the pushed receipt finishes it', async () => {
    // The signature 云呼科技 was approved at Aliyun above; this template is approved there too.
    const sig = (
      await t.db
        .select()
        .from(smsSignatures)
        .where(and(eq(smsSignatures.projectId, a.projectId), eq(smsSignatures.name, '云呼科技')))
    )[0];
    expect(sig?.status).toBe('approved');
    const tpl = await templateFor(a.projectId, ownerA, '到店通知');
    expect((await send('POST', `${tpl.url}/submit`, ownerA)).statusCode).toBe(200);
    aliyun.review('template', (await refOf(smsTemplates, tpl.id))?.providerRef as string, 1);
    await runtime().sms.pollers.reviews.poll();
    const queued = await send('POST', `${sms(a.projectId)}/messages`, ownerA, {
      phone: '13800138041',
      signatureId: sig?.id,
      templateId: tpl.id,
      variables: { name: '王先生', service: '体检', time: '明天9点' },
    });
    expect(queued.statusCode, queued.body).toBe(201);
    const id = queued.json().data.id as string;
    // The route woke the runtime's worker; it may already be sending it.
    await runtime().sms.sender.runOnce();
    await vi.waitFor(async () => expect((await messageRow(id))?.status).toBe('submitted'), { timeout: 5000 });
    const submitted = await messageRow(id);
    expect(submitted).toMatchObject({ provider: 'aliyun' });
    const atAliyun = aliyun.messages.find((m) => m.bizId === submitted?.providerMessageId);
    expect(atAliyun).toMatchObject({ phone: '13800138041', signName: '云呼科技', outId: id });
    expect(atAliyun?.params).toEqual({ name: '王先生', service: '体检', time: '明天9点' });

    aliyun.deliver(submitted?.providerMessageId as string, '13800138041', { success: true });
    const urls = await pushUrls(a.projectId, ownerA);
    expect((await push(urls.receipts, aliyun.reportPush())).statusCode).toBe(200);
    const done = await messageRow(id);
    expect(done).toMatchObject({ status: 'delivered', errorCode: null });
    expect(((done?.timeline ?? []) as { status: string }[]).map((e) => e.status)).toEqual(
      expect.arrayContaining(['submitted', 'delivered']),
    );
  });
});

describe('receipt poller', () => {
  it('asks for receipts nobody pushed, each message at most every few minutes', async () => {
    const ali = await sentMessage(a.projectId, '13800138021', 20 * 60_000);
    const tc = await sentMessage(b.projectId, '13900139021', 20 * 60_000);
    const fresh = await sentMessage(b.projectId, '13900139022', 60_000);
    expect(await runtime().sms.pollers.receipts.poll()).toBe(0);
    expect((await messageRow(ali.id))?.leaseUntil).not.toBeNull();
    expect((await messageRow(fresh.id))?.leaseUntil).toBeNull();

    aliyun.deliver(ali.providerMessageId, '13800138021', { success: true });
    tencent.report(tc.providerMessageId, 'SUCCESS', '用户短信送达成功');
    // Asked a moment ago: not again before everyMs.
    expect(await runtime().sms.pollers.receipts.poll()).toBe(0);
    await t.db.update(smsMessages).set({ leaseUntil: null }).where(eq(smsMessages.status, 'submitted'));
    expect(await runtime().sms.pollers.receipts.poll()).toBe(2);
    expect((await messageRow(ali.id))?.status).toBe('delivered');
    expect((await messageRow(tc.id))?.status).toBe('delivered');
    expect((await messageRow(fresh.id))?.status).toBe('submitted');
  });
});

describe('client resolver', () => {
  it('picks up a saved setting on the next use, without a restart', async () => {
    const first = await runtime().sms.clients(a.projectId);
    expect(first.kind).toBe('aliyun');
    expect(await runtime().sms.clients(a.projectId)).toBe(first);
    const put = (body: object) =>
      send('PUT', `${sms(a.projectId)}/settings`, ownerA, { dailyCapPerNumber: 5, ...body });
    await put({
      provider: 'aliyun',
      accessKeyId: ALI_KEY,
      accessKeySecret: 'a-wrong-secret-000',
      qualificationId: '10001',
    });
    const wrong = await runtime().sms.clients(a.projectId);
    expect(wrong).not.toBe(first);
    const refused = await wrong.send({
      phone: '13800138031',
      signName: SENT_SIGN,
      templateCode: SENT_TEMPLATE,
      params: [{ name: 'order', value: 'A2' }],
      outId: 'x',
    });
    expect(refused).toMatchObject({ ok: false, code: 'SignatureDoesNotMatch' });
    await put({ provider: 'outbox' });
    expect((await runtime().sms.clients(a.projectId)).kind).toBe('outbox');
    const outbox = await send('GET', `${sms(a.projectId)}/settings`, ownerA);
    expect(outbox.json().data.pushUrls).toBeNull();
    await put({
      provider: 'aliyun',
      accessKeyId: ALI_KEY,
      accessKeySecret: ALI_SECRET,
      qualificationId: '10001',
    });
    expect((await runtime().sms.clients(a.projectId)).kind).toBe('aliyun');
  });

  it('never shows a secret in a response or a log line', async () => {
    // A failing poll logs the vendor's error.
    const sig = await signatureFor(b.projectId, ownerB, '腾讯日志');
    await send('POST', `${sig.url}/submit`, ownerB);
    tencent.failNext('AuthFailure.SignatureFailure');
    await runtime().sms.pollers.reviews.poll();
    expect(logs.some((l) => l.includes('sms review query failed'))).toBe(true);
    const token = (await pushUrls(a.projectId, ownerA)).receipts.split('/')[5] as string;
    for (const secret of [ALI_SECRET, TC_KEY, token]) {
      expect(bodies.filter((body) => body.includes(secret) && secret !== token)).toEqual([]);
      expect(logs.filter((line) => line.includes(secret))).toEqual([]);
    }
  });
});
