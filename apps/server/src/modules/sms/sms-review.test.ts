// biome-ignore-all lint/suspicious/noTemplateCurlyInString: SMS templates write their variables as ${name}.
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedTwoProjects } from '../../../test/helpers';
import { smsSignatures } from '../../db/schema';
import { decideReview } from './sms-review.service';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;
let t: TestApp;
let a: { userId: string; projectId: string };
let b: { userId: string; projectId: string };
let owner: Headers;
let member: Headers;
let outsider: Headers;

beforeAll(async () => {
  t = await createTestApp();
  ({ a, b, owner, memberHeaders: member, outsider } = await seedTwoProjects(t.db, t.app));
});
afterAll(() => t?.app.close());

const base = (projectId = a.projectId) => `/api/project/${projectId}/sms`;
const send = (
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  headers: Headers = owner,
  payload?: unknown,
) => t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
function upload(url: string, bytes: Buffer, fileName: string, headers: Headers = owner) {
  const boundary = '----sms-proof';
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return t.app.inject({
    method: 'POST',
    url,
    headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: body,
  });
}

describe('SMS signatures (签名)', () => {
  it('refuses a bad name, naming the rule, and a duplicate', async () => {
    for (const name of ['云', '【云呼科技】', '云呼科技有限公司客服中心一部', '云呼 科技']) {
      const res = await send('POST', `${base()}/signatures`, owner, { name, source: 'enterprise' });
      expect(res.statusCode, name).toBe(400);
      expect(res.json().message).toContain('签名名称须为 2–12 个中文、英文或数字');
    }
    const bad = await send('POST', `${base()}/signatures`, owner, { name: '云呼科技', source: 'tv' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('签名来源不支持');
    const made = await send('POST', `${base()}/signatures`, member, {
      name: '云呼科技',
      source: 'enterprise',
    });
    expect(made.statusCode, made.body).toBe(200);
    expect(made.json().data).toMatchObject({ name: '云呼科技', status: 'draft', proofName: null });
    const dup = await send('POST', `${base()}/signatures`, owner, { name: '云呼科技', source: 'app' });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().message).toBe('签名【云呼科技】已存在');
  });

  it('goes draft → proof → reviewing → withdrawn → reviewing → rejected → edited → approved', async () => {
    const id = (await send('POST', `${base()}/signatures`, owner, { name: '小云外呼', source: 'app' })).json()
      .data.id;
    const url = `${base()}/signatures/${id}`;
    const noProof = await send('POST', `${url}/submit`);
    expect(noProof.statusCode).toBe(400);
    expect(noProof.json().message).toContain('请先上传签名证明材料');

    const notImage = await upload(`${url}/proof`, Buffer.from('just text'), '执照.txt');
    expect(notImage.statusCode).toBe(400);
    expect(notImage.json().message).toBe('字段 file：证明文件须为 PNG、JPG 图片或 PDF 文档');
    const proof = await upload(`${url}/proof`, PNG, '营业执照.png');
    expect(proof.statusCode, proof.body).toBe(200);
    expect(proof.json().data.proofName).toBe('营业执照.png');

    const submitted = await send('POST', `${url}/submit`);
    expect(submitted.json().data).toMatchObject({ status: 'reviewing', provider: 'outbox' });
    expect((await send('PUT', url, owner, { name: '小云外呼', source: 'website' })).statusCode).toBe(409);
    expect((await send('POST', `${url}/submit`)).json().message).toBe('签名已在审核中');

    expect((await send('POST', `${url}/withdraw`)).json().data.status).toBe('withdrawn');
    expect((await send('POST', `${url}/withdraw`)).statusCode).toBe(409);
    await send('POST', `${url}/submit`);

    await expect(
      decideReview(t.db, 'signature', id, { approve: false, reason: ' ' }, Date.now()),
    ).rejects.toThrow('驳回时须填写原因');
    await decideReview(t.db, 'signature', id, { approve: false, reason: '证明材料不清晰' }, Date.now());
    const rejected = (await send('GET', url)).json().data;
    expect(rejected).toMatchObject({ status: 'rejected', rejectReason: '证明材料不清晰' });

    const edited = await send('PUT', url, owner, { name: '小云外呼', source: 'app', remark: '补充了截图' });
    expect(edited.json().data).toMatchObject({ status: 'draft', rejectReason: null, remark: '补充了截图' });
    await send('POST', `${url}/submit`);
    await decideReview(t.db, 'signature', id, { approve: true }, Date.now());
    expect((await send('GET', url)).json().data.status).toBe('approved');
    // Approved is final: SMS already sent carry it.
    expect((await send('PUT', url, owner, { name: '小云外呼', source: 'app' })).json().message).toBe(
      '签名已通过审核，不能修改；如需变更请新建',
    );
    await expect(decideReview(t.db, 'signature', id, { approve: true }, Date.now())).rejects.toThrow(
      '签名不在审核中（当前：已通过）',
    );

    const listed = (await send('GET', `${base()}/signatures?status=approved`)).json().data;
    expect(listed.items.map((s: { id: string }) => s.id)).toEqual([id]);
  });
});

describe('SMS templates (模板)', () => {
  it('keeps the variables in order and goes through review', async () => {
    const made = await send('POST', `${base()}/templates`, member, {
      name: '预约提醒',
      type: 'notification',
      content: '${name}您好，您预约的${service}将于${time}开始，地址：${address}。${name}请准时到达。',
    });
    expect(made.statusCode, made.body).toBe(200);
    expect(made.json().data).toMatchObject({
      status: 'draft',
      variables: ['name', 'service', 'time', 'address'],
    });
    const url = `${base()}/templates/${made.json().data.id}`;
    // Checked against the template rules first: a variable used twice is refused, and nothing changes.
    const refused = await send('POST', `${url}/submit`, member);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toMatch(/^模板未通过检查：.*name/);
    expect((await send('GET', url)).json().data.status).toBe('draft');
    await send('PUT', url, member, {
      name: '预约提醒',
      type: 'notification',
      content: '${name}您好，您预约的${service}将于${time}开始，地址：${address}，请准时到达。',
    });
    expect((await send('POST', `${url}/submit`, member)).json().data.status).toBe('reviewing');
    await decideReview(t.db, 'template', made.json().data.id, { approve: true }, Date.now());
    expect((await send('GET', url)).json().data).toMatchObject({ status: 'approved' });

    const tooLong = await send('POST', `${base()}/templates`, owner, {
      name: '长',
      type: 'marketing',
      content: '好'.repeat(501),
    });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().message).toContain('模板内容不能超过 500 个字符');
  });
});

describe('SMS isolation', () => {
  it('refuses a new proof while the signature is under review and keeps the file its reviewer has', async () => {
    const id = (
      await send('POST', `${base()}/signatures`, owner, { name: '审核中签名', source: 'app' })
    ).json().data.id;
    const url = `${base()}/signatures/${id}`;
    expect((await upload(`${url}/proof`, PNG, '营业执照.png')).statusCode).toBe(200);
    expect((await send('POST', `${url}/submit`)).json().data.status).toBe('reviewing');
    const [row] = await t.db.select().from(smsSignatures).where(eq(smsSignatures.id, id));
    const dir = path.dirname(row!.proofPath!);
    const filesBefore = fs.readdirSync(dir).sort();

    const replaced = await upload(`${url}/proof`, Buffer.from('%PDF-1.4\n%%EOF\n'), '新执照.pdf');
    expect(replaced.statusCode).toBe(409);
    expect(replaced.json().message).toBe('签名审核中，不能修改；请先撤回');
    expect(fs.readFileSync(row!.proofPath!)).toEqual(PNG);
    expect(fs.readdirSync(dir).sort()).toEqual(filesBefore);
    expect((await send('GET', url)).json().data).toMatchObject({
      proofName: '营业执照.png',
      status: 'reviewing',
    });
  });

  it("keeps a project's signatures and templates to its members", async () => {
    const sig = (
      await send('POST', `${base()}/signatures`, owner, { name: '隔离测试', source: 'enterprise' })
    ).json().data.id;
    const tpl = (
      await send('POST', `${base()}/templates`, owner, {
        name: '隔离',
        type: 'notification',
        content: '您好',
      })
    ).json().data.id;
    for (const [method, url, payload] of [
      ['GET', `${base()}/signatures`],
      ['GET', `${base()}/signatures/${sig}`],
      ['PUT', `${base()}/signatures/${sig}`, { name: '改名', source: 'app' }],
      ['POST', `${base()}/signatures/${sig}/submit`],
      ['DELETE', `${base()}/signatures/${sig}`],
      ['GET', `${base()}/templates`],
      ['PUT', `${base()}/templates/${tpl}`, { name: '改', type: 'notification', content: '改' }],
      ['DELETE', `${base()}/templates/${tpl}`],
    ] as const) {
      const res = await send(method, url, outsider, payload);
      expect(res.statusCode, `${method} ${url}`).toBe(403);
    }
    // Through their own project, the ids do not exist.
    expect((await send('GET', `${base(b.projectId)}/signatures/${sig}`, outsider)).statusCode).toBe(404);
    expect((await send('DELETE', `${base(b.projectId)}/templates/${tpl}`, outsider)).statusCode).toBe(404);
    expect((await send('GET', `${base(b.projectId)}/templates`, outsider)).json().data.total).toBe(0);
    expect((await send('GET', `${base()}/signatures/${sig}`)).json().data.name).toBe('隔离测试');
  });
});
