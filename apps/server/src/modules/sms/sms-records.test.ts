import { SMS_LIST_TOTAL_CAP, type SmsMessage } from '@callpilot/contracts';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedTwoProjects, seedUser } from '../../../test/helpers';
import { smsMessages } from '../../db/schema';
import { nextDigitPrefix } from './sms-records.service';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;
let t: TestApp;
let a: { userId: string; projectId: string };
let b: { userId: string; projectId: string };
let owner: Headers;
let outsider: Headers;

type Seed = Partial<typeof smsMessages.$inferInsert> & { id: string; phone: string; at: string };
const row = (projectId: string, s: Seed): typeof smsMessages.$inferInsert => {
  const { at, ...rest } = s;
  return {
    projectId,
    signatureName: '云呼科技',
    templateId: 'tpl-1',
    templateName: '验证码',
    templateType: 'verification',
    content: `【云呼科技】短信 ${s.id}`,
    provider: 'outbox',
    status: 'delivered',
    source: 'single',
    createdAt: new Date(at),
    sendAfter: new Date(at),
    ...rest,
  };
};

/**
 * A known week: 23:59 on 1 March and 00:00 on 2 March (China time) sit on either side of a day
 * boundary, so a statistic that buckets by UTC day would put them together.
 */
const SEEDS: Seed[] = [
  { id: 'm1', phone: '13800000001', at: '2026-03-01T23:59:00+08:00', status: 'delivered', parts: 1 },
  {
    id: 'm2',
    phone: '13800000002',
    at: '2026-03-02T00:00:00+08:00',
    status: 'failed',
    parts: 2,
    errorCode: 'isv.MOBILE_NUMBER_ILLEGAL',
    errorMessage: '号码格式错误',
    source: 'follow_up',
    callId: 'call-1',
    timeline: [
      { status: 'queued', at: '2026-03-01T16:00:00.000Z', detail: null },
      { status: 'submitted', at: '2026-03-01T16:00:01.000Z', detail: null },
      { status: 'failed', at: '2026-03-01T16:00:05.000Z', detail: '号码格式错误' },
    ],
  },
  {
    id: 'm3',
    phone: '13900000003',
    at: '2026-03-02T10:00:00+08:00',
    templateId: 'tpl-2',
    templateName: '活动通知',
    templateType: 'marketing',
    status: 'accepted',
    source: 'batch',
    batchId: 'batch-1',
    taskId: 'task-1',
  },
  {
    id: 'm4',
    phone: '15000000004',
    at: '2026-03-02T12:00:00+08:00',
    templateId: 'tpl-2',
    templateName: '活动通知',
    templateType: 'marketing',
    status: 'blocked',
    errorMessage: '号码在免打扰名单中',
    source: 'batch',
    batchId: 'batch-1',
  },
  // Not due for years: the app's sending worker (running in every test app) must leave it queued.
  {
    id: 'm5',
    phone: '13800000001',
    at: '2026-03-03T09:00:00+08:00',
    status: 'queued',
    source: 'api',
    sendAfter: new Date('2099-01-01T00:00:00Z'),
  },
  {
    id: 'm6',
    phone: '13800000001',
    at: '2026-03-03T10:00:00+08:00',
    templateId: 'tpl-2',
    templateName: '活动通知',
    templateType: 'marketing',
    status: 'failed',
    parts: 3,
    errorCode: 'MK:0001',
    errorMessage: '用户停机',
    source: 'assistant',
  },
  {
    id: 'm7',
    phone: '17700000007',
    at: '2026-03-04T08:00:00+08:00',
    templateId: null,
    templateName: '助手短信',
    status: 'submitted',
    source: 'assistant',
  },
];

beforeAll(async () => {
  t = await createTestApp();
  ({ a, b, owner, outsider } = await seedTwoProjects(t.db, t.app, 'sms-records-'));
  await t.db.insert(smsMessages).values(SEEDS.map((s) => row(a.projectId, s)));
  await t.db
    .insert(smsMessages)
    .values(row(b.projectId, { id: 'b1', phone: '13800000001', at: '2026-03-02T10:00:00+08:00' }));
});
afterAll(() => t?.app.close());

const base = (projectId = a.projectId) => `/api/project/${projectId}/sms`;
const get = (url: string, headers: Headers = owner) => t.app.inject({ method: 'GET', url, headers });
const ids = async (query: string) => {
  const res = await get(`${base()}/messages?${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().data.items as SmsMessage[]).map((m) => m.id);
};

describe('SMS records (发送记录)', () => {
  it('lists newest first with the timeline, and each filter narrows the list', async () => {
    const res = await get(`${base()}/messages`);
    expect(res.json().data).toMatchObject({ total: 7, totalCapped: false, page: 1, pageSize: 20 });
    const items = res.json().data.items as SmsMessage[];
    expect(items.map((m) => m.id)).toEqual(['m7', 'm6', 'm5', 'm4', 'm3', 'm2', 'm1']);
    expect(items.find((m) => m.id === 'm2')).toMatchObject({
      status: 'failed',
      errorMessage: '号码格式错误',
      callId: 'call-1',
      timeline: [{ status: 'queued' }, { status: 'submitted' }, { status: 'failed', detail: '号码格式错误' }],
    });

    expect(await ids('phone=13800000001')).toEqual(['m6', 'm5', 'm1']);
    expect(await ids(`phone=${encodeURIComponent('+86 138-0000-0001')}`)).toEqual(['m6', 'm5', 'm1']);
    expect(await ids('phone=139')).toEqual(['m3']);
    expect(await ids('phone=1380000000')).toEqual(['m6', 'm5', 'm2', 'm1']);
    expect(await ids('templateId=tpl-2')).toEqual(['m6', 'm4', 'm3']);
    expect(await ids('status=failed')).toEqual(['m6', 'm2']);
    expect(await ids('source=batch')).toEqual(['m4', 'm3']);
    expect(await ids('taskId=task-1')).toEqual(['m3']);
    expect(await ids('callId=call-1')).toEqual(['m2']);
    expect(await ids('batchId=batch-1')).toEqual(['m4', 'm3']);
    const day = `from=${encodeURIComponent('2026-03-02T00:00:00+08:00')}&to=${encodeURIComponent('2026-03-02T23:59:59.999+08:00')}`;
    expect(await ids(day)).toEqual(['m4', 'm3', 'm2']);
    expect(await ids(`${day}&status=failed`)).toEqual(['m2']);
  });

  it('pages without repeating or skipping a record', async () => {
    const pages = await Promise.all([1, 2, 3, 4].map((page) => ids(`pageSize=2&page=${page}`)));
    expect(pages).toEqual([['m7', 'm6'], ['m5', 'm4'], ['m3', 'm2'], ['m1']]);
    const last = await get(`${base()}/messages?pageSize=2&page=4`);
    expect(last.json().data).toMatchObject({ total: 7, page: 4, pageSize: 2 });
  });

  it('counts a long history only up to the cap and says so', async () => {
    const c = await seedUser(t.db, { email: 'sms-records-c@example.com' });
    await t.db.execute(sql`insert into ${smsMessages}
      (id, project_id, phone, signature_name, template_name, template_type, content, provider, status, source)
      select 'cap-' || g, ${c.projectId}, '138' || lpad(g::text, 8, '0'), '云呼科技', '验证码', 'verification',
        '【云呼科技】验证码', 'outbox', 'delivered', 'single'
      from generate_series(1, ${SMS_LIST_TOTAL_CAP + 5}) g`);
    const res = await get(
      `${base(c.projectId)}/messages?pageSize=5`,
      await loginAs(t.app, 'sms-records-c@example.com'),
    );
    expect(res.json().data).toMatchObject({ total: SMS_LIST_TOTAL_CAP, totalCapped: true });
    expect(res.json().data.items).toHaveLength(5);
  });

  it('refuses a bad query naming the field', async () => {
    const cases: [string, string][] = [
      ['status=sent', 'status'],
      ['source=web', 'source'],
      ['from=yesterday', '开始时间须为 ISO 8601 时间'],
      ['pageSize=500', '每页条数不能超过 100'],
      ['phone=138abc', '字段 phone：手机号只能包含数字'],
      ['phone=138000000012', '字段 phone：手机号不能超过 11 位'],
    ];
    for (const [query, expected] of cases) {
      const res = await get(`${base()}/messages?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().message, query).toContain(expected);
    }
    const badPhone = await get(`${base()}/messages/export?phone=abc`);
    expect(badPhone.statusCode).toBe(400);
    expect(badPhone.json().message).toContain('字段 phone');
    const exported = await get(`${base()}/messages/export?format=pdf`);
    expect(exported.statusCode).toBe(400);
    expect(exported.json().message).toContain('导出格式须为 csv 或 xlsx');
  });

  it('shows one record, and 404 for another project’s', async () => {
    const one = await get(`${base()}/messages/m3`);
    expect(one.statusCode).toBe(200);
    expect(one.json().data).toMatchObject({ id: 'm3', templateName: '活动通知', batchId: 'batch-1' });
    const foreign = await get(`${base()}/messages/b1`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().message).toBe('短信记录不存在');
  });

  it('exports the filtered list with Chinese headers', async () => {
    const res = await get(`${base()}/messages/export?batchId=batch-1`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/csv');
    expect(res.headers['content-disposition']).toContain(encodeURIComponent('短信发送记录-'));
    const lines = res.body
      .replace(/^\uFEFF/, '')
      .trim()
      .split('\r\n');
    expect(lines[0]).toBe('时间,手机号,签名,模板,内容,计费条数,状态,失败原因,来源,通话,任务,批次');
    expect(lines.slice(1)).toEqual([
      '2026-03-02 12:00:00,15000000004,云呼科技,活动通知,【云呼科技】短信 m4,1,未发送,号码在免打扰名单中,批量发送,,,batch-1',
      '2026-03-02 10:00:00,13900000003,云呼科技,活动通知,【云呼科技】短信 m3,1,运营商已接收,,批量发送,,task-1,batch-1',
    ]);
    const failed = await get(`${base()}/messages/export?status=failed`);
    expect(failed.body).toContain('isv.MOBILE_NUMBER_ILLEGAL 号码格式错误');
    const xlsx = await get(`${base()}/messages/export?format=xlsx`);
    expect(xlsx.statusCode).toBe(200);
    expect(xlsx.rawPayload.subarray(0, 2).toString('latin1')).toBe('PK');
  });

  it('keeps each project’s records to its members', async () => {
    for (const url of [
      `${base()}/messages`,
      `${base()}/messages/m1`,
      `${base()}/messages/export`,
      `${base()}/statistics?from=2026-03-01&to=2026-03-07`,
    ]) {
      // Another project's path is refused whole (project access); its ids through one's own, 404.
      const res = await get(url, outsider);
      expect(res.statusCode, url).toBe(403);
      expect(res.body).not.toContain('13800000002');
    }
    const own = await get(`${base(b.projectId)}/messages`, outsider);
    expect(own.json().data.items.map((m: SmsMessage) => m.id)).toEqual(['b1']);
    const viaOwn = await get(`${base(b.projectId)}/messages/m1`, outsider);
    expect(viaOwn.statusCode).toBe(404);
  });
});

describe('SMS statistics (数据统计)', () => {
  const stats = async (query: string) => {
    const res = await get(`${base()}/statistics?${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  it('counts by China day, zeros included, by template and by failure reason', async () => {
    const data = await stats('from=2026-02-28&to=2026-03-03');
    expect(data.totals).toEqual({ sent: 4, delivered: 1, failed: 2, pending: 1, blocked: 1, parts: 7 });
    expect(data.byDay).toEqual([
      { day: '2026-02-28', sent: 0, delivered: 0, failed: 0, pending: 0, blocked: 0, parts: 0 },
      { day: '2026-03-01', sent: 1, delivered: 1, failed: 0, pending: 0, blocked: 0, parts: 1 },
      { day: '2026-03-02', sent: 2, delivered: 0, failed: 1, pending: 1, blocked: 1, parts: 3 },
      { day: '2026-03-03', sent: 1, delivered: 0, failed: 1, pending: 0, blocked: 0, parts: 3 },
    ]);
    expect(data.byTemplate).toHaveLength(2);
    expect(data.byTemplate).toContainEqual({
      templateId: 'tpl-1',
      templateName: '验证码',
      sent: 2,
      delivered: 1,
      failed: 1,
      pending: 0,
      blocked: 0,
      parts: 3,
    });
    expect(data.byTemplate).toContainEqual({
      templateId: 'tpl-2',
      templateName: '活动通知',
      sent: 2,
      delivered: 0,
      failed: 1,
      pending: 1,
      blocked: 1,
      parts: 4,
    });
    expect(data.failureReasons).toHaveLength(2);
    expect(data.failureReasons).toContainEqual({ code: 'MK:0001', message: '用户停机', count: 1 });
    expect(data.failureReasons).toContainEqual({
      code: 'isv.MOBILE_NUMBER_ILLEGAL',
      message: '号码格式错误',
      count: 1,
    });
  });

  it('puts 23:59 and 00:00 (+08:00) on their own China days', async () => {
    const first = await stats('from=2026-03-01&to=2026-03-01');
    expect(first.totals).toMatchObject({ sent: 1, delivered: 1, failed: 0 });
    const second = await stats('from=2026-03-02&to=2026-03-02');
    expect(second.totals).toMatchObject({ sent: 2, failed: 1, pending: 1, blocked: 1 });
    expect(second.byDay.map((d: { day: string }) => d.day)).toEqual(['2026-03-02']);
  });

  it('narrows to one template, keeps free text apart, and is empty honestly', async () => {
    const tpl = await stats('from=2026-03-01&to=2026-03-07&templateId=tpl-2');
    expect(tpl.totals).toEqual({ sent: 2, delivered: 0, failed: 1, pending: 1, blocked: 1, parts: 4 });
    const all = await stats('from=2026-03-04&to=2026-03-04');
    expect(all.byTemplate).toEqual([
      {
        templateId: null,
        templateName: '助手短信',
        sent: 1,
        delivered: 0,
        failed: 0,
        pending: 1,
        blocked: 0,
        parts: 1,
      },
    ]);
    const none = await stats('from=2025-01-01&to=2025-01-02');
    expect(none.totals.sent).toBe(0);
    expect(none.byDay).toHaveLength(2);
    expect(none.byTemplate).toEqual([]);
    expect(none.failureReasons).toEqual([]);
  });

  it('refuses a bad range naming the field', async () => {
    const cases: [string, string][] = [
      ['from=2026-03-05&to=2026-03-01', '结束日期不能早于开始日期'],
      ['from=2026-01-01&to=2026-06-01', '统计范围不能超过 92 天'],
      ['from=2026/03/01&to=2026-03-02', '开始日期须为 YYYY-MM-DD'],
      ['to=2026-03-02', 'from'],
    ];
    for (const [query, expected] of cases) {
      const res = await get(`${base()}/statistics?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().message, query).toContain(expected);
    }
  });
});

describe('nextDigitPrefix', () => {
  it('is the first digit string past every number with the prefix', () => {
    expect(nextDigitPrefix('138')).toBe('139');
    expect(nextDigitPrefix('1399')).toBe('14');
    expect(nextDigitPrefix('99')).toBeNull();
  });
});
