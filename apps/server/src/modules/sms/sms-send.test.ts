// biome-ignore-all lint/suspicious/noTemplateCurlyInString: SMS templates write their variables as ${name}.
import { randomUUID } from 'node:crypto';
import { and, count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedTwoProjects } from '../../../test/helpers';
import { doNotCall, smsMessages, smsSettings, smsSignatures, smsTemplates } from '../../db/schema';
import { createOutboxSmsClient } from './providers/outbox';
import type { SmsClientResolver, SmsProviderClient, SmsSendResult } from './providers/types';
import { enqueueFreeText, enqueueSms, recordOptOut } from './sms-send.service';
import { SMS_MAX_ATTEMPTS, SmsSender } from './sms-sender';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;
let t: TestApp;
let a: { userId: string; projectId: string };
let b: { userId: string; projectId: string };
let owner: Headers;
let member: Headers;
let outsider: Headers;
const ids = { signature: '', notice: '', promo: '', code: '', draft: '' };

/** 10:00 China time, inside the 推广 window. */
const DAYTIME = new Date('2026-11-24T02:00:00Z');

async function seedApproved(projectId: string) {
  const signature = randomUUID();
  await t.db.insert(smsSignatures).values({
    id: signature,
    projectId,
    name: '云呼科技',
    source: 'enterprise',
    status: 'approved',
    provider: 'outbox',
  });
  const template = async (
    name: string,
    type: 'notification' | 'marketing' | 'verification',
    content: string,
    status: 'approved' | 'draft' = 'approved',
  ) => {
    const id = randomUUID();
    const variables = [...content.matchAll(/\$\{([^}]*)\}/g)].map((m) => m[1] as string);
    await t.db
      .insert(smsTemplates)
      .values({ id, projectId, name, type, content, variables, status, provider: 'outbox' });
    return id;
  };
  return {
    signature,
    notice: await template('到店提醒', 'notification', '${name}您好，您预约的${time}到店，地址中山路8号。'),
    promo: await template('双十一', 'marketing', '会员日全场8折，详询门店。拒收请回复R'),
    code: await template('登录验证码', 'verification', '您的验证码为${code}，5分钟内有效。'),
    draft: await template('草稿', 'notification', '草稿内容', 'draft'),
  };
}

beforeAll(async () => {
  t = await createTestApp();
  ({ a, b, owner, memberHeaders: member, outsider } = await seedTwoProjects(t.db, t.app, 'sms-'));
  Object.assign(ids, await seedApproved(a.projectId));
  // These tests drive the worker themselves, each pass at the moment it names.
  await t.app.ready();
  await t.app.runtime.sms.sender.stop();
});
afterAll(() => t?.app.close());

const base = (projectId = a.projectId) => `/api/project/${projectId}/sms`;
const send = (method: 'GET' | 'POST' | 'DELETE', url: string, headers: Headers = owner, payload?: unknown) =>
  t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

const messageCount = async (projectId = a.projectId) =>
  Number(
    (await t.db.select({ n: count() }).from(smsMessages).where(eq(smsMessages.projectId, projectId)))[0]?.n,
  );

const smsOutbox = { send: async (m: { to: string; text: string }) => void t.sms.push(m) };
const outboxClients: SmsClientResolver = async () => createOutboxSmsClient(smsOutbox);
const sender = (clients: SmsClientResolver, now: Date) =>
  new SmsSender({ db: t.db, clients, log: { warn: () => {}, info: () => {} }, now: () => now });

/** Runs the sending worker over everything due at `now`. */
async function drain(clients: SmsClientResolver, now: Date) {
  const worker = sender(clients, now);
  while ((await worker.runOnce()) > 0) {}
}

const row = async (id: string) => (await t.db.select().from(smsMessages).where(eq(smsMessages.id, id)))[0]!;
const phone = () => `139${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;

describe('sending one SMS', () => {
  it('queues the rendered text with its parts, and the outbox delivers it with the whole timeline', async () => {
    const to = phone();
    const res = await send('POST', `${base()}/messages`, member, {
      phone: `+86 ${to.slice(0, 3)}-${to.slice(3)}`,
      signatureId: ids.signature,
      templateId: ids.notice,
      variables: { name: '王先生', time: '周五 10:00' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const queued = res.json().data;
    expect(queued).toMatchObject({
      phone: to,
      status: 'queued',
      content: '【云呼科技】王先生您好，您预约的周五 10:00到店，地址中山路8号。',
      parts: 1,
      source: 'single',
      provider: 'outbox',
    });
    await drain(outboxClients, new Date());
    const sent = await row(queued.id);
    expect(sent.status).toBe('delivered');
    expect(sent.providerMessageId).toMatch(/^outbox-/);
    expect((sent.timeline as { status: string }[]).map((e) => e.status)).toEqual([
      'queued',
      'submitted',
      'accepted',
      'delivered',
    ]);
    expect(t.sms.at(-1)).toMatchObject({ to, text: queued.content });
  });

  it('refuses bad input with the field and the rule, and records nothing', async () => {
    const before = await messageCount();
    const cases: [unknown, number, string][] = [
      [
        { phone: '1380013800', signatureId: ids.signature, templateId: ids.notice },
        400,
        '手机号须为 11 位中国大陆手机号',
      ],
      [
        { phone: phone(), signatureId: ids.signature, templateId: ids.notice, variables: { name: '王' } },
        400,
        '缺少变量 time 的值',
      ],
      [
        {
          phone: phone(),
          signatureId: ids.signature,
          templateId: ids.notice,
          variables: { name: 'x'.repeat(36), time: '1' },
        },
        400,
        '变量值不能超过 35 个字符',
      ],
      [
        { phone: phone(), signatureId: ids.signature, templateId: ids.draft },
        409,
        '模板「草稿」尚未通过审核',
      ],
      [{ phone: phone(), signatureId: ids.signature, templateId: 'nope' }, 404, '模板不存在'],
    ];
    for (const [payload, status, message] of cases) {
      const res = await send('POST', `${base()}/messages`, owner, payload);
      expect(res.statusCode, res.body).toBe(status);
      expect(res.json().message).toContain(message);
    }
    expect(await messageCount()).toBe(before);
  });

  it('keeps projects apart: another project can neither send with nor see this one', async () => {
    const before = await messageCount();
    const body = {
      phone: phone(),
      signatureId: ids.signature,
      templateId: ids.code,
      variables: { code: '1234' },
    };
    expect((await send('POST', `${base()}/messages`, outsider, body)).statusCode).toBe(403);
    // The other project's own route cannot name this project's template either.
    const theirs = await send('POST', `${base(b.projectId)}/messages`, outsider, body);
    expect(theirs.statusCode).toBe(404);
    expect((await send('GET', `${base()}/opt-outs`, outsider)).statusCode).toBe(403);
    expect((await send('POST', `${base()}/opt-outs`, outsider, { phone: phone() })).statusCode).toBe(403);
    expect(await messageCount()).toBe(before);
    expect(await messageCount(b.projectId)).toBe(0);
  });
});

describe('the rules of the Chinese market', () => {
  it('holds a 推广 SMS outside 08:00–20:00 China time until 08:00 and says so', async () => {
    const evening = new Date('2026-11-24T13:30:00Z'); // 21:30 China time
    const message = await enqueueSms(
      t.db,
      {
        projectId: a.projectId,
        phone: phone(),
        signatureId: ids.signature,
        templateId: ids.promo,
        variables: {},
        source: 'single',
      },
      evening,
    );
    expect(message.status).toBe('waiting');
    expect(message.sendAfter).toBe('2026-11-25T00:00:00.000Z');
    expect(message.timeline[0]?.detail).toContain('将于 11-25 08:00 发出');
    await drain(outboxClients, new Date('2026-11-24T23:59:00Z'));
    expect((await row(message.id)).status).toBe('waiting');
    await drain(outboxClients, new Date('2026-11-25T00:00:00Z'));
    expect((await row(message.id)).status).toBe('delivered');
  });

  it('sends a 推广 SMS reached after 20:00 (a long queue) the next morning, not at night', async () => {
    const message = await enqueueSms(
      t.db,
      {
        projectId: a.projectId,
        phone: phone(),
        signatureId: ids.signature,
        templateId: ids.promo,
        variables: {},
        source: 'single',
      },
      new Date('2026-11-24T11:59:00Z'), // 19:59
    );
    expect(message.status).toBe('queued');
    await drain(outboxClients, new Date('2026-11-24T12:01:00Z')); // 20:01
    const later = await row(message.id);
    expect(later.status).toBe('waiting');
    expect(later.sendAfter.toISOString()).toBe('2026-11-25T00:00:00.000Z');
  });

  it('blocks 推广 and 通知 to numbers that opted out or are on the do-not-call list, never a 验证码', async () => {
    const optedOut = phone();
    const refused = phone();
    await recordOptOut(t.db, a.projectId, optedOut, 'reply', 'TD');
    await t.db.insert(doNotCall).values({ projectId: a.projectId, phone: refused, source: 'manual' });
    const input = (to: string, templateId: string, variables: Record<string, string> = {}) => ({
      projectId: a.projectId,
      phone: to,
      signatureId: ids.signature,
      templateId,
      variables,
      source: 'single' as const,
    });
    const promo = await enqueueSms(t.db, input(optedOut, ids.promo), DAYTIME);
    expect(promo).toMatchObject({ status: 'blocked', errorMessage: '该号码已回复退订，在短信免打扰名单中' });
    const notice = await enqueueSms(t.db, input(refused, ids.notice, { name: '李', time: '明天' }), DAYTIME);
    expect(notice).toMatchObject({ status: 'blocked', errorMessage: '该号码在项目免打扰名单中' });
    const code = await enqueueSms(t.db, input(optedOut, ids.code, { code: '8888' }), DAYTIME);
    expect(code.status).toBe('queued');
  });

  it('does not send to a number that opted out after it was queued', async () => {
    const to = phone();
    const message = await enqueueSms(
      t.db,
      {
        projectId: a.projectId,
        phone: to,
        signatureId: ids.signature,
        templateId: ids.notice,
        variables: { name: '赵', time: '今天' },
        source: 'single',
      },
      DAYTIME,
    );
    await recordOptOut(t.db, a.projectId, to, 'reply', '退订');
    await drain(outboxClients, new Date());
    expect(await row(message.id)).toMatchObject({
      status: 'blocked',
      errorMessage: '该号码已回复退订，在短信免打扰名单中',
    });
  });

  it('keeps to the daily cap per number across China days', async () => {
    const [project] = await t.db.select().from(smsSettings).where(eq(smsSettings.projectId, a.projectId));
    if (project)
      await t.db
        .update(smsSettings)
        .set({ dailyCapPerNumber: 2 })
        .where(eq(smsSettings.projectId, a.projectId));
    else await t.db.insert(smsSettings).values({ projectId: a.projectId, dailyCapPerNumber: 2 });
    const to = phone();
    const input = {
      projectId: a.projectId,
      phone: to,
      signatureId: ids.signature,
      templateId: ids.code,
      variables: { code: '1' },
      source: 'api' as const,
    };
    const yesterday = new Date('2026-11-23T15:59:00Z'); // 23:59 China time on the 23rd
    expect((await enqueueSms(t.db, input, yesterday)).status).toBe('queued');
    expect((await enqueueSms(t.db, input, yesterday)).status).toBe('queued');
    expect((await enqueueSms(t.db, input, yesterday)).status).toBe('blocked');
    const today = new Date('2026-11-23T16:00:00Z'); // 00:00 on the 24th
    expect((await enqueueSms(t.db, input, today)).status).toBe('queued');
    expect((await enqueueSms(t.db, input, today)).status).toBe('queued');
    const third = await enqueueSms(t.db, input, today);
    expect(third).toMatchObject({
      status: 'blocked',
      errorMessage: '该号码今日已收到 2 条短信，达到每号码每日上限',
    });
    await t.db
      .update(smsSettings)
      .set({ dailyCapPerNumber: 0 })
      .where(eq(smsSettings.projectId, a.projectId));
    expect((await enqueueSms(t.db, input, today)).status).toBe('queued');
    await t.db
      .update(smsSettings)
      .set({ dailyCapPerNumber: 5 })
      .where(eq(smsSettings.projectId, a.projectId));
  });
});

describe('the sending worker', () => {
  const failing = (result: SmsSendResult): SmsClientResolver => {
    const client: SmsProviderClient = {
      ...createOutboxSmsClient(smsOutbox),
      kind: 'aliyun',
      send: async () => result,
    };
    return async () => client;
  };

  it('retries a throttled send later and fails it for good after the last attempt', async () => {
    const message = await enqueueSms(
      t.db,
      {
        projectId: a.projectId,
        phone: phone(),
        signatureId: ids.signature,
        templateId: ids.code,
        variables: { code: '42' },
        source: 'api',
      },
      DAYTIME,
    );
    await t.db
      .update(smsTemplates)
      .set({ provider: 'aliyun', providerRef: 'SMS_123' })
      .where(eq(smsTemplates.id, ids.code));
    const throttled = failing({ ok: false, code: 'Throttling', message: '请求过于频繁', retryable: true });
    let at = new Date();
    for (let attempt = 1; attempt < SMS_MAX_ATTEMPTS; attempt += 1) {
      await drain(throttled, at);
      const waiting = await row(message.id);
      expect(waiting.status).toBe('queued');
      expect(waiting.errorMessage).toContain(`第 ${attempt} 次尝试`);
      expect(waiting.sendAfter.getTime()).toBeGreaterThan(at.getTime());
      at = waiting.sendAfter;
    }
    await drain(throttled, at);
    const failed = await row(message.id);
    expect(failed).toMatchObject({ status: 'failed', errorCode: 'Throttling', errorMessage: '请求过于频繁' });
    expect((failed.timeline as { status: string }[]).at(-1)?.status).toBe('failed');
    await t.db
      .update(smsTemplates)
      .set({ provider: 'outbox', providerRef: null })
      .where(eq(smsTemplates.id, ids.code));
  });

  it('fails a template the configured provider never approved, saying what to do', async () => {
    const message = await enqueueSms(
      t.db,
      {
        projectId: a.projectId,
        phone: phone(),
        signatureId: ids.signature,
        templateId: ids.notice,
        variables: { name: '钱', time: '今天' },
        source: 'single',
      },
      DAYTIME,
    );
    await drain(failing({ ok: true, providerMessageId: 'never' }), new Date());
    expect(await row(message.id)).toMatchObject({
      status: 'failed',
      errorMessage: '该模板未在当前短信服务商处审核通过：请在模板管理中重新提交审核',
    });
  });

  it('two workers never send the same message twice', async () => {
    const queued = await Promise.all(
      Array.from({ length: 12 }, () =>
        enqueueSms(
          t.db,
          {
            projectId: a.projectId,
            phone: phone(),
            signatureId: ids.signature,
            templateId: ids.code,
            variables: { code: '7' },
            source: 'api',
          },
          DAYTIME,
        ),
      ),
    );
    const sent: string[] = [];
    const counting: SmsClientResolver = async () => ({
      ...createOutboxSmsClient(smsOutbox),
      send: async (request) => {
        sent.push(request.outId);
        return { ok: true, providerMessageId: `outbox-${request.outId}` };
      },
    });
    const now = new Date();
    await Promise.all([drain(counting, now), drain(counting, now)]);
    const mine = sent.filter((id) => queued.some((m) => m.id === id));
    expect(mine.sort()).toEqual(queued.map((m) => m.id).sort());
  });
});

describe('free text from an assistant or a flow', () => {
  it('is recorded and sent by the outbox, and recorded as not sent with a cloud provider', async () => {
    const viaOutbox = await enqueueFreeText(t.db, {
      projectId: b.projectId,
      phone: '13800138000',
      content: '地址：中山路8号',
      source: 'assistant',
      callId: 'call-1',
    });
    expect(viaOutbox).toMatchObject({
      status: 'queued',
      templateName: '助手请求（自由文本）',
      callId: 'call-1',
    });
    await t.db.insert(smsSettings).values({ projectId: b.projectId, provider: 'aliyun' });
    const viaCloud = await enqueueFreeText(t.db, {
      projectId: b.projectId,
      phone: '13800138000',
      content: '地址：中山路8号',
      source: 'flow',
    });
    expect(viaCloud.status).toBe('blocked');
    expect(viaCloud.errorMessage).toContain('运营商只接收已审核的模板短信');
  });
});

describe('the SMS do-not-disturb list', () => {
  it('adds, finds and removes numbers; only owners and admins remove', async () => {
    const to = phone();
    const added = await send('POST', `${base()}/opt-outs`, member, { phone: `86${to}` });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json().data).toMatchObject({ phone: to, source: 'manual' });
    expect((await send('POST', `${base()}/opt-outs`, member, { phone: '12345' })).json().message).toContain(
      '手机号须为 11 位中国大陆手机号',
    );
    const found = await send('GET', `${base()}/opt-outs?phone=${to.slice(-6)}`, member);
    expect(found.json().data.items.map((o: { phone: string }) => o.phone)).toEqual([to]);
    expect((await send('DELETE', `${base()}/opt-outs/${to}`, member)).statusCode).toBe(403);
    expect((await send('DELETE', `${base()}/opt-outs/${to}`, outsider)).statusCode).toBe(403);
    expect((await send('DELETE', `${base(b.projectId)}/opt-outs/${to}`, outsider)).statusCode).toBe(404);
    expect((await send('DELETE', `${base()}/opt-outs/${to}`, owner)).statusCode).toBe(200);
    const left = await t.db
      .select({ n: count() })
      .from(smsMessages)
      .where(and(eq(smsMessages.projectId, a.projectId), eq(smsMessages.phone, to)));
    expect(Number(left[0]?.n)).toBe(0);
    expect((await send('GET', `${base()}/opt-outs?phone=${to}`, owner)).json().data.total).toBe(0);
  });
});
