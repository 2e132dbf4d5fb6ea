// biome-ignore-all lint/suspicious/noTemplateCurlyInString: SMS templates write their variables as ${name}.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { and, count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { doNotCall, smsBatches, smsMessages, smsOptOuts, smsSignatures, smsTemplates } from '../../db/schema';
import { systemClock } from '../../engine/clock';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;

/**
 * 10:00 China time: inside the 推广 window. Years ahead, because the app's sending worker runs on the
 * real clock: records queued "now" here are never due for it, so the test sees them as committed.
 */
const DAYTIME = Date.parse('2030-06-10T10:00:00+08:00');
let now = DAYTIME;
const clock = { now: () => now, sleep: systemClock.sleep };

let t: TestApp;
let dataDir: string;
let a: { userId: string; projectId: string };
let b: { userId: string; projectId: string };
let owner: Headers;
let outsider: Headers;
let signatureId: string;
let noticeId: string;
let marketingId: string;
let draftId: string;

async function template(
  projectId: string,
  type: 'notification' | 'marketing',
  content: string,
  status = 'approved',
) {
  const id = randomUUID();
  const variables = [...content.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]!);
  await t.db.insert(smsTemplates).values({
    id,
    projectId,
    name: `模板${id.slice(0, 4)}`,
    type,
    content,
    variables,
    status: status as 'approved',
  });
  return id;
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'sms-batches-'));
  t = await createTestApp({ clock, env: { DATA_DIR: dataDir } });
  a = await seedUser(t.db, { email: 'owner@example.com' });
  b = await seedUser(t.db, { email: 'other@example.com' });
  owner = await loginAs(t.app, 'owner@example.com');
  outsider = await loginAs(t.app, 'other@example.com');
  signatureId = randomUUID();
  await t.db.insert(smsSignatures).values({
    id: signatureId,
    projectId: a.projectId,
    name: '云呼科技',
    source: 'enterprise',
    status: 'approved',
  });
  noticeId = await template(a.projectId, 'notification', '尊敬的${name}，您的订单金额${amount}元已确认。');
  marketingId = await template(a.projectId, 'marketing', '${name}您好，双十一全场五折，回T退订');
  draftId = await template(a.projectId, 'notification', '您好${name}', 'draft');
});
afterAll(async () => {
  await t?.app.close();
  await rm(dataDir, { recursive: true, force: true });
});

const base = (projectId = a.projectId) => `/api/project/${projectId}/sms/batches`;

function upload(
  csv: string,
  templateId: string,
  { headers = owner, projectId = a.projectId, fileName = '名单.csv' } = {},
) {
  const boundary = '----sms-batch';
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: text/csv\r\n\r\n`,
    ),
    Buffer.from(csv, 'utf8'),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return t.app.inject({
    method: 'POST',
    url: `${base(projectId)}/uploads?signatureId=${signatureId}&templateId=${templateId}`,
    headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: body,
  });
}

const post = (url: string, payload: object, headers = owner) =>
  t.app.inject({ method: 'POST', url, headers, payload });

describe('SMS batch send (批量发送)', () => {
  it('previews every kind of refused row, with rendered texts and parts', async () => {
    await t.db
      .insert(smsOptOuts)
      .values({ projectId: a.projectId, phone: '13900139000', source: 'reply', reply: 'TD' });
    await t.db.insert(doNotCall).values({ projectId: a.projectId, phone: '13700137000', source: 'manual' });
    // Five sends today reach the default daily cap of 5.
    await t.db.insert(smsMessages).values(
      Array.from({ length: 5 }, () => ({
        id: randomUUID(),
        projectId: a.projectId,
        phone: '13600136000',
        signatureName: '云呼科技',
        templateName: '旧模板',
        templateType: 'notification' as const,
        content: '【云呼科技】您好',
        provider: 'outbox' as const,
        status: 'delivered' as const,
        source: 'single' as const,
        createdAt: new Date(now - 3_600_000),
      })),
    );
    const csv = [
      '手机号,姓名,金额',
      '13800138000,张三,100',
      'abc,李四,1',
      '010-12345678,座机,1',
      '138 0013 8000,张三又,2',
      '13900139000,退订,3',
      '13700137000,黑名单,4',
      '13500135000,王五,',
      `13400134000,${'长'.repeat(36)},5`,
      '13600136000,上限,6',
      '+86 13300133000,赵六,7',
    ].join('\n');
    const res = await upload(csv, noticeId);
    expect(res.statusCode, res.body).toBe(200);
    const preview = res.json().data;
    expect(preview.mapping).toEqual({ phone: '手机号', variables: { name: '姓名', amount: '金额' } });
    expect(preview.variables).toEqual(['name', 'amount']);
    expect(preview.rows).toBe(10);
    expect(preview.valid).toBe(2);
    expect(preview.counts).toEqual({ invalid: 2, duplicate: 1, opted_out: 2, variable: 2, over_cap: 1 });
    expect(preview.texts[0]).toEqual({
      row: 2,
      phone: '13800138000',
      content: '【云呼科技】尊敬的张三，您的订单金额100元已确认。',
      parts: 1,
    });
    expect(preview.texts[1].phone).toBe('13300133000');
    expect(preview.estimatedParts).toBe(2);
    expect(preview.sendAfter).toBeNull();
    expect(preview.sample[0]).toEqual({ 手机号: '13800138000', 姓名: '张三', 金额: '100' });

    // Another mapping: without a column for ${amount}, every row lacks it.
    const changed = await post(`${base()}/uploads/${preview.uploadId}/preview`, {
      mapping: { phone: '手机号', variables: { name: '姓名', amount: '' } },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().data.valid).toBe(0);
    expect(changed.json().data.counts.variable).toBe(7);
    const bad = await post(`${base()}/uploads/${preview.uploadId}/preview`, {
      mapping: { phone: '电话', variables: {} },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('字段 mapping.phone：文件中没有“电话”列');

    // Commit with the guessed mapping: two queued records, eight refused rows to download.
    const committed = await post(`${base()}/uploads/${preview.uploadId}/commit`, {
      mapping: preview.mapping,
    });
    expect(committed.statusCode, committed.body).toBe(201);
    const batch = committed.json().data;
    expect(batch).toMatchObject({ total: 10, accepted: 2, rejected: 8, waiting: 2, sent: 0 });
    const records = await t.db.select().from(smsMessages).where(eq(smsMessages.batchId, batch.id));
    expect(records.map((r) => r.phone).sort()).toEqual(['13300133000', '13800138000']);
    for (const r of records) {
      expect(r).toMatchObject({ status: 'queued', source: 'batch', provider: 'outbox', parts: 1 });
      expect(r.sendAfter.getTime()).toBe(DAYTIME);
    }
    expect(records.find((r) => r.phone === '13300133000')?.variables).toEqual({ name: '赵六', amount: '7' });

    const again = await post(`${base()}/uploads/${preview.uploadId}/commit`, { mapping: preview.mapping });
    expect(again.statusCode).toBe(404);
    expect(await readdir(path.join(dataDir, 'sms-batches'))).toEqual([]);

    const rejects = await t.app.inject({
      method: 'GET',
      url: `${base()}/${batch.id}/rejects`,
      headers: owner,
    });
    expect(rejects.statusCode).toBe(200);
    expect(rejects.headers['content-type']).toContain('text/csv');
    const lines = rejects.body
      .replace(/^\uFEFF/, '')
      .trim()
      .split('\r\n');
    expect(rejects.body.startsWith('\uFEFF')).toBe(true);
    expect(lines[0]).toBe('行号,手机号,原因');
    expect(lines).toHaveLength(9);
    expect(lines[3]).toBe('5,13800138000,与第 2 行号码重复');
    expect(lines[4]).toBe('6,13900139000,该号码已回复退订，在短信免打扰名单中');
    expect(lines[5]).toBe('7,13700137000,该号码在项目免打扰名单中');
    expect(lines[6]).toBe('8,13500135000,缺少变量 amount 的值');
    expect(lines[8]).toBe('10,13600136000,该号码今日已收到 5 条短信，达到每号码每日上限');

    const list = await t.app.inject({ method: 'GET', url: `${base()}?page=1&pageSize=10`, headers: owner });
    expect(list.json().data).toMatchObject({ total: 1, items: [{ id: batch.id, fileName: '名单.csv' }] });
  });

  it('holds a 推广 batch committed at 21:00 China time until 08:00', async () => {
    now = Date.parse('2030-06-10T21:00:00+08:00');
    try {
      const res = await upload('手机号,name\n13100131000,小明\n13200132000,小红', marketingId);
      expect(res.statusCode, res.body).toBe(200);
      const preview = res.json().data;
      const eight = new Date('2030-06-11T08:00:00+08:00').toISOString();
      expect(preview.sendAfter).toBe(eight);
      const committed = await post(`${base()}/uploads/${preview.uploadId}/commit`, {
        mapping: preview.mapping,
      });
      expect(committed.statusCode, committed.body).toBe(201);
      const records = await t.db
        .select()
        .from(smsMessages)
        .where(eq(smsMessages.batchId, committed.json().data.id));
      expect(records).toHaveLength(2);
      for (const r of records) {
        expect(r.status).toBe('waiting');
        expect(r.sendAfter.toISOString()).toBe(eight);
        expect(r.timeline).toEqual([
          {
            status: 'waiting',
            at: new Date(now).toISOString(),
            detail: '推广短信仅在 8:00–20:00（北京时间）发送，将于 06-11 08:00 发出',
          },
        ]);
      }
    } finally {
      now = DAYTIME;
    }
  });

  it('refuses a template that is not approved (409) and a file without a phone column', async () => {
    const res = await upload('手机号,name\n13100131000,小明', draftId);
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toContain('未通过审核');
    const noPhone = await upload('姓名,金额\n小明,1', noticeId);
    expect(noPhone.statusCode).toBe(400);
    expect(noPhone.json().message).toContain('未找到手机号列');
  });

  it('answers bad input with a 4xx naming the field, and changes nothing', async () => {
    const before = await t.db.select({ n: count() }).from(smsBatches);
    const notMultipart = await post(
      `${base()}/uploads?signatureId=${signatureId}&templateId=${noticeId}`,
      {},
    );
    expect(notMultipart.statusCode).toBe(400);
    expect(notMultipart.json().message).toContain('multipart/form-data');
    const noTemplate = await upload('手机号\n13100131000', '');
    expect(noTemplate.statusCode).toBe(400);
    expect(noTemplate.json().message).toContain('模板');
    const xls = await upload('手机号\n13100131000', noticeId, { fileName: '名单.xls' });
    expect(xls.statusCode).toBe(400);
    expect(xls.json().message).toContain('.xls');
    const uploaded = (await upload('手机号,姓名,金额\n13100131000,小明,1', noticeId)).json().data;
    for (const mapping of [{}, { phone: '' }, { phone: '手机号', variables: { 不存在: '姓名' } }]) {
      const res = await post(`${base()}/uploads/${uploaded.uploadId}/commit`, { mapping });
      expect(res.statusCode, JSON.stringify(mapping)).toBe(400);
      expect(res.json().message).toMatch(/手机号列|模板没有变量/);
    }
    expect((await post(`${base()}/uploads/../../etc/commit`, { mapping: uploaded.mapping })).statusCode).toBe(
      404,
    );
    expect(
      (await post(`${base()}/uploads/not-a-uuid/commit`, { mapping: uploaded.mapping })).statusCode,
    ).toBe(404);
    const noTemplateId = await t.app.inject({ method: 'GET', url: `${base()}/template`, headers: owner });
    expect(noTemplateId.statusCode).toBe(400);
    expect(await t.db.select({ n: count() }).from(smsBatches)).toEqual(before);
  });

  it('offers a template with 手机号 and the variables', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `${base()}/template?templateId=${noticeId}`,
      headers: owner,
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('\uFEFF手机号,name,amount\r\n');
  });

  it("keeps another project's members out of batches and uploads", async () => {
    const res = await upload('手机号,name\n13100131000,小明', marketingId);
    const { uploadId } = res.json().data;
    const [batch] = await t.db
      .select()
      .from(smsBatches)
      .where(eq(smsBatches.projectId, a.projectId))
      .limit(1);
    const before = await t.db.select({ n: count() }).from(smsMessages);

    // Project A's addresses are refused to a non-member ...
    expect(
      (await upload('手机号,name\n13100131000,小明', marketingId, { headers: outsider })).statusCode,
    ).toBe(403);
    const mapping = { phone: '手机号', variables: { name: 'name' } };
    expect((await post(`${base()}/uploads/${uploadId}/commit`, { mapping }, outsider)).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: base(), headers: outsider })).statusCode).toBe(403);
    // ... and through their own project, A's signature, template, upload and batch do not exist.
    const own = await upload('手机号,name\n13100131000,小明', marketingId, {
      headers: outsider,
      projectId: b.projectId,
    });
    expect(own.statusCode).toBe(404);
    expect(
      (await post(`${base(b.projectId)}/uploads/${uploadId}/commit`, { mapping }, outsider)).statusCode,
    ).toBe(404);
    const rejects = await t.app.inject({
      method: 'GET',
      url: `${base(b.projectId)}/${batch!.id}/rejects`,
      headers: outsider,
    });
    expect(rejects.statusCode).toBe(404);
    const list = await t.app.inject({ method: 'GET', url: base(b.projectId), headers: outsider });
    expect(list.json().data.total).toBe(0);
    expect(await t.db.select({ n: count() }).from(smsMessages)).toEqual(before);
  });

  it('commits a 100,000-row list: every row queued with its own text', { timeout: 180_000 }, async () => {
    const rows = Array.from({ length: 100_000 }, (_, i) => `1${String(5_000_000_000 + i)},客户${i},${i}`);
    const res = await upload(['手机号,姓名,金额', ...rows].join('\n'), noticeId, { fileName: '十万.csv' });
    expect(res.statusCode, res.body).toBe(200);
    const preview = res.json().data;
    expect(preview.valid).toBe(100_000);
    const committed = await post(`${base()}/uploads/${preview.uploadId}/commit`, {
      mapping: preview.mapping,
    });
    expect(committed.statusCode, committed.body).toBe(201);
    const id = committed.json().data.id;
    expect(committed.json().data).toMatchObject({ total: 100_000, accepted: 100_000, rejected: 0 });
    const [queued] = await t.db
      .select({ n: count() })
      .from(smsMessages)
      .where(and(eq(smsMessages.batchId, id), eq(smsMessages.status, 'queued')));
    expect(queued?.n).toBe(100_000);
    const [last] = await t.db
      .select()
      .from(smsMessages)
      .where(and(eq(smsMessages.batchId, id), eq(smsMessages.phone, '15000099999')));
    expect(last?.content).toBe('【云呼科技】尊敬的客户99999，您的订单金额99999元已确认。');
  });
});
