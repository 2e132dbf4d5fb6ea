import { eq, sql } from 'drizzle-orm';
import Papa from 'papaparse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { knowledgeDocuments, knowledgeSegments, projectLimits } from '../../db/schema';
import { encodeGbk, makeDocx, makePdf, makeXlsx, multipart, readXlsx } from './fixtures.test-helper';
import { drainKnowledgeQueue } from './worker';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;

let t: TestApp;
let owner: { authorization: string };
let outsider: { authorization: string };
let projectA: string;
let projectB: string;

const FAQ_CSV = [
  '问题,答案',
  '宽带安装需要多长时间？,受理后一般在 3 个工作日内上门安装，偏远地区不超过 7 天。',
  '怎么办理宽带退订？,请携带身份证到营业厅办理，或拨打客服热线 10000 按提示操作。',
  '光猫坏了怎么办？,光猫属于租用设备，故障可免费上门更换，请先报修。',
  '"账单里的""信息费""是什么？","信息费是您订购的增值业务费用，可发送 0000 查询并退订。"',
  '宽带网速慢怎么处理？,请先重启光猫和路由器，仍然较慢可报修，工程师会远程检测线路。',
  ',这一行没有问题，应当跳过',
].join('\n');

const api = (path: string) => `/api/project/${projectA}/knowledge-bases${path}`;

async function createBase(name: string, extra: Record<string, unknown> = {}, project = projectA) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/project/${project}/knowledge-bases`,
    headers: owner,
    payload: { name, ...extra },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { id: string; name: string };
}

async function upload(
  baseId: string,
  files: Parameters<typeof multipart>[0],
  headers = owner,
  project = projectA,
) {
  const body = multipart(files);
  return t.app.inject({
    method: 'POST',
    url: `/api/project/${project}/knowledge-bases/${baseId}/documents`,
    headers: { ...headers, ...body.headers },
    payload: body.payload,
  });
}

async function documents(baseId: string) {
  const res = await t.app.inject({
    method: 'GET',
    url: api(`/${baseId}/documents?pageSize=100`),
    headers: owner,
  });
  expect(res.statusCode).toBe(200);
  return res.json().data.items as {
    id: string;
    fileName: string;
    status: string;
    error: string;
    segmentCount: number;
  }[];
}

async function segments(baseId: string, query = '') {
  const res = await t.app.inject({
    method: 'GET',
    url: api(`/${baseId}/segments?pageSize=100${query}`),
    headers: owner,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as {
    total: number;
    items: {
      id: string;
      content: string;
      question: string | null;
      answer: string | null;
      similarQuestions: string[];
      enabled: boolean;
    }[];
  };
}

async function hitTest(baseId: string, query: string, topK = 3) {
  const res = await t.app.inject({
    method: 'POST',
    url: api(`/${baseId}/hit-test`),
    headers: owner,
    payload: { query, topK },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as {
    mode: string;
    tookMs: number;
    segments: {
      id: string;
      content: string;
      question: string | null;
      answer: string | null;
      score: number;
    }[];
  };
}

beforeAll(async () => {
  t = await createTestApp();
  ({ projectId: projectA } = await seedUser(t.db, { email: 'kb-owner@example.com' }));
  ({ projectId: projectB } = await seedUser(t.db, { email: 'kb-outsider@example.com' }));
  owner = await loginAs(t.app, 'kb-owner@example.com');
  outsider = await loginAs(t.app, 'kb-outsider@example.com');
});

afterAll(async () => {
  await t.app.close();
});

describe('knowledge bases', () => {
  it('creates, lists with keyword and pagination, reads, renames and deletes a base', async () => {
    const first = await createBase('宽带常见问题', {
      description: '客服 FAQ',
      chunkSize: 300,
      chunkOverlap: 30,
    });
    await createBase('售后政策');
    await createBase('招聘说明');

    const page = await t.app.inject({ method: 'GET', url: api('?page=1&pageSize=2'), headers: owner });
    expect(page.json().data.total).toBe(3);
    expect(page.json().data.items).toHaveLength(2);

    const found = await t.app.inject({
      method: 'GET',
      url: api(`?keyword=${encodeURIComponent('宽带')}`),
      headers: owner,
    });
    expect(found.json().data.items.map((b: { name: string }) => b.name)).toEqual(['宽带常见问题']);

    const read = await t.app.inject({ method: 'GET', url: api(`/${first.id}`), headers: owner });
    expect(read.json().data).toMatchObject({
      name: '宽带常见问题',
      description: '客服 FAQ',
      chunkSize: 300,
      chunkOverlap: 30,
    });
    expect(read.json().data).toMatchObject({ documentCount: 0, segmentCount: 0, pendingCount: 0 });

    const renamed = await t.app.inject({
      method: 'PUT',
      url: api(`/${first.id}`),
      headers: owner,
      payload: { name: '宽带 FAQ', chunkSize: 400, chunkOverlap: 40 },
    });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json().data).toMatchObject({ name: '宽带 FAQ', chunkSize: 400, description: '' });

    const clash = await t.app.inject({
      method: 'POST',
      url: api(''),
      headers: owner,
      payload: { name: '售后政策' },
    });
    expect(clash.statusCode).toBe(409);
    expect(clash.json().message).toBe('知识库名称“售后政策”已存在');

    for (const base of (await t.app.inject({ method: 'GET', url: api(''), headers: owner })).json().data
      .items) {
      const del = await t.app.inject({ method: 'DELETE', url: api(`/${base.id}`), headers: owner });
      expect(del.statusCode).toBe(200);
    }
    const gone = await t.app.inject({ method: 'GET', url: api(`/${first.id}`), headers: owner });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().message).toBe('知识库不存在');
  });

  it('refuses bad input with the field and the rule, and creates nothing', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, '请输入知识库名称'],
      [{ name: '   ' }, '请输入知识库名称'],
      [{ name: '长'.repeat(51) }, '知识库名称不能超过 50 个字符'],
      [{ name: '分段', chunkSize: 50 }, '分段长度不能小于 100 个字符'],
      [{ name: '分段', chunkSize: 200, chunkOverlap: 200 }, '分段重叠须小于分段长度'],
      [{ name: '描述', description: '长'.repeat(201) }, '描述不能超过 200 个字符'],
    ];
    for (const [payload, message] of cases) {
      const res = await t.app.inject({ method: 'POST', url: api(''), headers: owner, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().message).toContain(message);
    }
    const list = await t.app.inject({ method: 'GET', url: api(''), headers: owner });
    expect(list.json().data.total).toBe(0);
  });

  it('honours the knowledge base limit of a metered project', async () => {
    const { projectId } = await seedUser(t.db, { email: 'kb-limited@example.com' });
    const headers = await loginAs(t.app, 'kb-limited@example.com');
    await t.db
      .update(projectLimits)
      .set({ hasBalance: true, knowledgeLimit: 1 })
      .where(eq(projectLimits.projectId, projectId));
    const create = (name: string) =>
      t.app.inject({
        method: 'POST',
        url: `/api/project/${projectId}/knowledge-bases`,
        headers,
        payload: { name },
      });
    expect((await create('第一个')).statusCode).toBe(200);
    const second = await create('第二个');
    expect(second.statusCode).toBe(403);
    expect(second.json()).toMatchObject({
      code: 'LIMIT_REACHED',
      message: '知识库数量已达上限（1 个），请联系销售提升额度',
    });
  });
});

describe('documents', () => {
  it('accepts txt, GBK txt, md, docx, pdf, csv and xlsx, and indexes each into segments', async () => {
    const base = await createBase('全部格式');
    const res = await upload(base.id, [
      { name: '安装说明.txt', content: '宽带安装流程：受理、派单、上门安装。\n安装完成后请当场测速。' },
      { name: 'gbk.txt', content: encodeGbk('营业厅营业时间为每天上午九点到下午六点。') },
      { name: 'notes.md', content: '# 资费\n\n月租 100 元包含 300 兆宽带。' },
      { name: 'policy.docx', content: await makeDocx(['退订须知', '退订请提前三天申请。']) },
      { name: 'manual.pdf', content: makePdf(['Router reset: hold the button for 10 seconds.']) },
      { name: 'faq.csv', content: FAQ_CSV },
      {
        name: 'faq.xlsx',
        content: await makeXlsx([
          ['问题', '答案'],
          ['发票怎么开？', '在 APP 的“账单”页申请电子发票。'],
        ]),
      },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const result = res.json().data;
    expect(result.rejected).toEqual([]);
    expect(
      result.accepted.map((d: { fileName: string; status: string; kind: string }) => [d.fileName, d.kind]),
    ).toEqual([
      ['安装说明.txt', 'text'],
      ['gbk.txt', 'text'],
      ['notes.md', 'text'],
      ['policy.docx', 'text'],
      ['manual.pdf', 'text'],
      ['faq.csv', 'qa'],
      ['faq.xlsx', 'qa'],
    ]);
    expect(result.accepted.every((d: { status: string }) => d.status === 'queued')).toBe(true);

    await drainKnowledgeQueue(t.db);
    const docs = await documents(base.id);
    expect(docs.map((d) => [d.fileName, d.status, d.error])).toEqual(
      expect.arrayContaining([
        ['安装说明.txt', 'ready', ''],
        ['gbk.txt', 'ready', ''],
        ['policy.docx', 'ready', ''],
        ['manual.pdf', 'ready', ''],
        // Ready, with what the import skipped: FAQ_CSV's last row has no question.
        ['faq.csv', 'ready', '1 行缺少问题或答案，已跳过'],
      ]),
    );
    const csv = docs.find((d) => d.fileName === 'faq.csv')!;
    expect(csv.segmentCount).toBe(5);

    const all = await segments(base.id);
    const text = all.items.map((s) => s.content).join('\n');
    expect(text).toContain('营业厅营业时间为每天上午九点到下午六点。');
    expect(text).toContain('退订请提前三天申请。');
    expect(text).toContain('Router reset: hold the button for 10 seconds.');

    // Question-answer pairs stay exactly as written, quotes and all.
    const pairs = (await segments(base.id, `&documentId=${csv.id}`)).items;
    expect(pairs.map((p) => p.question)).toEqual([
      '宽带安装需要多长时间？',
      '怎么办理宽带退订？',
      '光猫坏了怎么办？',
      '账单里的"信息费"是什么？',
      '宽带网速慢怎么处理？',
    ]);
    expect(pairs[3]!.answer).toBe('信息费是您订购的增值业务费用，可发送 0000 查询并退订。');

    const summary = await t.app.inject({ method: 'GET', url: api(`/${base.id}`), headers: owner });
    expect(summary.json().data).toMatchObject({ documentCount: 7, pendingCount: 0, segmentCount: all.total });

    const keyword = await segments(base.id, `&keyword=${encodeURIComponent('光猫')}`);
    expect(keyword.items.map((s) => s.question)).toEqual(['光猫坏了怎么办？', '宽带网速慢怎么处理？']);
  });

  it('rejects wrong type, empty, oversize and disguised files with a reason, and stores none of them', async () => {
    const base = await createBase('坏文件');
    const res = await upload(base.id, [
      { name: 'virus.exe', content: 'MZ...' },
      { name: 'empty.txt', content: '' },
      { name: 'blank.md', content: '  \n\n ' },
      { name: 'huge.txt', content: Buffer.alloc(20 * 1024 * 1024 + 1, 0x61) },
      { name: 'fake.pdf', content: 'just text pretending' },
      { name: 'fake.docx', content: 'not a zip' },
      { name: 'binary.txt', content: Buffer.from([0x00, 0x01, 0xff, 0xfe]) },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.accepted).toEqual([]);
    expect(res.json().data.rejected).toEqual([
      { fileName: 'virus.exe', reason: '不支持的文件类型，仅支持 txt、md、pdf、docx、csv、xlsx' },
      { fileName: 'empty.txt', reason: '文件为空' },
      { fileName: 'blank.md', reason: '文件为空' },
      { fileName: 'huge.txt', reason: '文件超过 20 MB' },
      {
        fileName: 'fake.pdf',
        reason: '文件内容不是 PDF，不支持的文件类型，仅支持 txt、md、pdf、docx、csv、xlsx',
      },
      {
        fileName: 'fake.docx',
        reason: '文件内容不是 Word（docx）文档，不支持的文件类型，仅支持 txt、md、pdf、docx、csv、xlsx',
      },
      {
        fileName: 'binary.txt',
        reason: '文件不是 UTF-8 或 GBK 编码的文本，不支持的文件类型，仅支持 txt、md、pdf、docx、csv、xlsx',
      },
    ]);
    expect(await documents(base.id)).toEqual([]);
  });

  it('fails a corrupt pdf with a clear reason and indexes nothing of it', async () => {
    const base = await createBase('损坏的 PDF');
    const good = makePdf(['fine']);
    const corrupt = Buffer.concat([
      Buffer.from('%PDF-1.4\n'),
      Buffer.from('1 0 obj << /Type /Catalog broken'),
    ]);
    const res = await upload(base.id, [
      { name: 'broken.pdf', content: corrupt },
      { name: 'truncated.pdf', content: good.subarray(0, 40) },
      { name: 'bad.csv', content: '姓名,电话\n张三,123' },
      { name: 'no-pairs.csv', content: '问题,答案\n只有问题,\n,只有答案' },
    ]);
    expect(res.json().data.accepted).toHaveLength(4);
    await drainKnowledgeQueue(t.db);
    const docs = await documents(base.id);
    const byName = Object.fromEntries(docs.map((d) => [d.fileName, d]));
    expect(byName['broken.pdf']).toMatchObject({
      status: 'failed',
      error: 'PDF 文件已损坏或无法解析',
      segmentCount: 0,
    });
    expect(byName['truncated.pdf']).toMatchObject({ status: 'failed', error: 'PDF 文件已损坏或无法解析' });
    expect(byName['bad.csv']!.error).toBe('未找到“问题”和“答案”列：第一行须为表头，包含“问题”和“答案”两列');
    expect(byName['no-pairs.csv']!.error).toBe('没有有效的问答对：2 行缺少问题或答案');
    expect((await segments(base.id)).total).toBe(0);
  });

  it('refuses more than ten files at once and a request that is not multipart', async () => {
    const base = await createBase('上传限制');
    const eleven = Array.from({ length: 11 }, (_, i) => ({ name: `f${i}.txt`, content: `第 ${i} 个文件` }));
    const tooMany = await upload(base.id, eleven);
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().message).toBe('一次最多上传 10 个文件');
    const json = await t.app.inject({
      method: 'POST',
      url: api(`/${base.id}/documents`),
      headers: owner,
      payload: { file: 'x' },
    });
    expect(json.statusCode).toBe(400);
    expect(json.json().message).toBe('请以 multipart/form-data 方式上传文件');
    expect(await documents(base.id)).toEqual([]);
  });

  it('deletes a document with its segments, and reindexes one with new chunk settings', async () => {
    const base = await createBase('重新解析', { chunkSize: 2000, chunkOverlap: 0 });
    const paragraphs = Array.from(
      { length: 12 },
      (_, i) => `第${i + 1}条：${'套餐说明文字'.repeat(15)}。`,
    ).join('\n');
    const res = await upload(base.id, [
      { name: 'long.txt', content: paragraphs },
      { name: 'other.txt', content: '其他内容' },
    ]);
    const [long, other] = res.json().data.accepted as { id: string }[];
    await drainKnowledgeQueue(t.db);
    expect((await segments(base.id, `&documentId=${long!.id}`)).total).toBe(1);

    await t.app.inject({
      method: 'PUT',
      url: api(`/${base.id}`),
      headers: owner,
      payload: { name: '重新解析', chunkSize: 300, chunkOverlap: 50 },
    });
    const reindex = await t.app.inject({
      method: 'POST',
      url: api(`/${base.id}/documents/${long!.id}/reindex`),
      headers: owner,
    });
    expect(reindex.json().data.status).toBe('queued');
    await drainKnowledgeQueue(t.db);
    const chunks = (await segments(base.id, `&documentId=${long!.id}`)).items;
    expect(chunks.length).toBeGreaterThan(4);
    expect(chunks.every((c) => c.content.length <= 300)).toBe(true);

    const del = await t.app.inject({
      method: 'DELETE',
      url: api(`/${base.id}/documents/${other!.id}`),
      headers: owner,
    });
    expect(del.statusCode).toBe(200);
    const left = await t.db
      .select()
      .from(knowledgeSegments)
      .where(eq(knowledgeSegments.documentId, other!.id));
    expect(left).toEqual([]);
    expect((await documents(base.id)).map((d) => d.fileName)).toEqual(['long.txt']);
    const again = await t.app.inject({
      method: 'DELETE',
      url: api(`/${base.id}/documents/${other!.id}`),
      headers: owner,
    });
    expect(again.statusCode).toBe(404);
    expect(again.json().message).toBe('文档不存在');
  });
});

describe('retrieval, editing and export', () => {
  let baseId: string;

  beforeAll(async () => {
    baseId = (await createBase('检索测试')).id;
    await upload(baseId, [
      { name: 'faq.csv', content: FAQ_CSV },
      { name: 'hours.txt', content: '营业厅营业时间为每天上午九点到下午六点，节假日正常营业。' },
    ]);
    await drainKnowledgeQueue(t.db);
  });

  it('ranks the right segment first for paraphrased questions, with scores between 0 and 1', async () => {
    const cases: [string, string][] = [
      ['装宽带要等几天', '宽带安装需要多长时间？'],
      ['我不想用宽带了，怎么退掉', '怎么办理宽带退订？'],
      ['网络特别卡是什么原因', '宽带网速慢怎么处理？'],
      ['光猫出故障了', '光猫坏了怎么办？'],
    ];
    for (const [query, question] of cases) {
      const result = await hitTest(baseId, query);
      expect(result.mode).toBe('fulltext');
      expect(result.segments[0]?.question, query).toBe(question);
      for (const s of result.segments) {
        expect(s.score).toBeGreaterThan(0);
        expect(s.score).toBeLessThanOrEqual(1);
      }
    }
    const hours = await hitTest(baseId, '你们营业厅几点开门');
    expect(hours.segments[0]?.content).toContain('上午九点');
    expect(hours.tookMs).toBeGreaterThanOrEqual(0);
  });

  it('scores an unrelated query below the default threshold of 0.3', async () => {
    const result = await hitTest(baseId, '今天天气怎么样', 10);
    expect(result.segments.every((s) => s.score < 0.3)).toBe(true);
  });

  it('follows an edited segment at once and never returns a disabled one', async () => {
    const first = (await hitTest(baseId, '光猫坏了')).segments[0]!;
    const edit = await t.app.inject({
      method: 'PUT',
      url: api(`/${baseId}/segments/${first.id}`),
      headers: owner,
      payload: { question: '机顶盒坏了怎么办？' },
    });
    expect(edit.statusCode, edit.body).toBe(200);
    expect(edit.json().data).toMatchObject({ question: '机顶盒坏了怎么办？', answer: first.answer });
    expect((await hitTest(baseId, '机顶盒出问题')).segments[0]?.id).toBe(first.id);

    const off = await t.app.inject({
      method: 'PUT',
      url: api(`/${baseId}/segments/${first.id}`),
      headers: owner,
      payload: { enabled: false },
    });
    expect(off.json().data.enabled).toBe(false);
    expect((await hitTest(baseId, '机顶盒出问题')).segments.map((s) => s.id)).not.toContain(first.id);

    const wrongField = await t.app.inject({
      method: 'PUT',
      url: api(`/${baseId}/segments/${first.id}`),
      headers: owner,
      payload: { content: '直接改内容' },
    });
    expect(wrongField.statusCode).toBe(400);
    expect(wrongField.json().message).toContain('问答对请修改问题');

    const empty = await t.app.inject({
      method: 'PUT',
      url: api(`/${baseId}/segments/${first.id}`),
      headers: owner,
      payload: { answer: '  ' },
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().message).toContain('请输入答案');

    await t.app.inject({
      method: 'PUT',
      url: api(`/${baseId}/segments/${first.id}`),
      headers: owner,
      payload: { enabled: true, question: '光猫坏了怎么办？' },
    });
  });

  it('edits a text segment and retrieves it by its new words', async () => {
    const hours = (await hitTest(baseId, '营业时间')).segments[0]!;
    const res = await t.app.inject({
      method: 'PUT',
      url: api(`/${baseId}/segments/${hours.id}`),
      headers: owner,
      payload: { content: '营业厅营业时间为每天上午九点到晚上八点，春节期间暂停营业。' },
    });
    expect(res.json().data.charCount).toBe(29);
    expect((await hitTest(baseId, '春节开门吗')).segments[0]?.id).toBe(hours.id);
  });

  it('exports the pairs as csv and xlsx that upload back into the same pairs, and everything as md', async () => {
    const before = (await segments(baseId)).items.filter((s) => s.question !== null);
    const csv = await t.app.inject({
      method: 'GET',
      url: api(`/${baseId}/export?format=csv`),
      headers: owner,
    });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.headers['content-disposition']).toContain(encodeURIComponent('检索测试.csv'));
    const xlsx = await t.app.inject({
      method: 'GET',
      url: api(`/${baseId}/export?format=xlsx`),
      headers: owner,
    });
    expect((await readXlsx(xlsx.rawPayload))[0]).toEqual(['问题', '答案']);

    const copy = await createBase('导入副本');
    await upload(copy.id, [
      { name: 'back.csv', content: csv.rawPayload },
      { name: 'back.xlsx', content: xlsx.rawPayload },
    ]);
    await drainKnowledgeQueue(t.db);
    const after = (await segments(copy.id)).items;
    const pairs = (items: typeof before) => items.map((s) => [s.question, s.answer]);
    expect(pairs(after)).toEqual([...pairs(before), ...pairs(before)]);

    const md = await t.app.inject({ method: 'GET', url: api(`/${baseId}/export?format=md`), headers: owner });
    expect(md.body).toContain('# 检索测试');
    expect(md.body).toContain('**问：** 宽带安装需要多长时间？');
    expect(md.body).toContain('春节期间暂停营业');

    const bad = await t.app.inject({
      method: 'GET',
      url: api(`/${baseId}/export?format=pdf`),
      headers: owner,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('导出格式须为 md、csv 或 xlsx');
  });

  it('escapes cells that a spreadsheet would run as formulas', async () => {
    const base = await createBase('公式');
    await upload(base.id, [{ name: 'f.csv', content: '问题,答案\n=1+1,@SUM(A1)\n正常问题,-5 元优惠' }]);
    await drainKnowledgeQueue(t.db);
    const csv = await t.app.inject({
      method: 'GET',
      url: api(`/${base.id}/export?format=csv`),
      headers: owner,
    });
    const rows = Papa.parse<string[]>(csv.body.replace(/^\uFEFF/, ''), { skipEmptyLines: true }).data;
    expect(rows).toEqual([
      ['问题', '答案', '相似问题'],
      ["'=1+1", "'@SUM(A1)", ''],
      ['正常问题', "'-5 元优惠", ''],
    ]);
  });

  it('validates the hit test', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: api(`/${baseId}/hit-test`),
      headers: owner,
      payload: { query: '', topK: 50 },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('请输入测试问题');
    expect(res.json().message).toContain('召回条数不能超过 20');
  });
});

describe('similar questions (相似问)', () => {
  const SIMILAR_CSV = [
    '问题,答案,相似问题',
    '怎么办理宽带退订？,请携带身份证到营业厅办理，或拨打 10000。,"不想用了怎么销户|宽带能拆机吗"',
    '光猫坏了怎么办？,光猫属于租用设备，可免费上门更换。,猫的灯不亮了',
    '营业厅几点开门？,每天九点到十八点，节假日照常营业。,',
  ].join('\n');
  let baseId: string;

  beforeAll(async () => {
    baseId = (await createBase('相似问')).id;
    await upload(baseId, [
      { name: 'similar.csv', content: SIMILAR_CSV },
      { name: 'note.txt', content: '宽带资费说明：月租一百元。' },
    ]);
    await drainKnowledgeQueue(t.db);
  });

  it('imports the 相似问题 column from csv and xlsx: split on line breaks and | ｜ ； ;, trimmed, deduplicated, bounded', async () => {
    const base = await createBase('相似问导入');
    const many = Array.from({ length: 22 }, (_, i) => `第${i + 1}种问法`).join('|');
    const tooLong = '长'.repeat(201);
    const csv = [
      '问题,答案,相似问题',
      `宽带安装需要多长时间？,3 个工作日内上门。,"装宽带要等几天\n 安装宽带多久 |宽带多久能装好｜装宽带要等几天；  ；宽带安装需要多长时间？;光纤入户要多久\n"`,
      `会员有什么权益？,全场 95 折。,"${many}|${tooLong}"`,
      '包邮吗？,满 99 元包邮。',
      ',没有问题的行,某个相似问',
    ].join('\n');
    const xlsx = await makeXlsx([
      ['问题', '答案', 'similar_questions'],
      ['发票怎么开？', '在 APP 的“账单”页申请。', '怎么开发票\n能开电子发票吗；发票在哪申请'],
      ['怎么改密码？', '在安全中心修改。', ''],
    ]);
    const aliases = [
      ['Question', 'Answer', 'Similar'],
      ['积分会过期吗？', '一年后过期。', '积分有效期多久'],
    ];
    const res = await upload(base.id, [
      { name: 'similar.csv', content: csv },
      { name: 'similar.xlsx', content: xlsx },
      { name: 'alias.csv', content: aliases.map((r) => r.join(',')).join('\n') },
      { name: 'alias.xlsx', content: await makeXlsx([['问题', '答案', '相似问法'], ...aliases.slice(1)]) },
    ]);
    expect(res.json().data.accepted).toHaveLength(4);
    await drainKnowledgeQueue(t.db);

    const docs = Object.fromEntries((await documents(base.id)).map((d) => [d.fileName, d]));
    // The pair file is still indexed; what was left out is counted, as skipped rows are.
    expect(docs['similar.csv']).toMatchObject({
      status: 'ready',
      segmentCount: 3,
      error:
        '1 行缺少问题或答案，已跳过；1 个相似问超过 200 个字符，已跳过；2 个相似问超出每个问题 20 个的上限，已跳过',
    });
    expect(docs['similar.xlsx']).toMatchObject({ status: 'ready', error: '' });

    const similarOf = async (fileName: string) =>
      (await segments(base.id, `&documentId=${docs[fileName]!.id}`)).items.map((s) => [
        s.question,
        s.similarQuestions,
      ]);
    expect(await similarOf('similar.csv')).toEqual([
      ['宽带安装需要多长时间？', ['装宽带要等几天', '安装宽带多久', '宽带多久能装好', '光纤入户要多久']],
      ['会员有什么权益？', Array.from({ length: 20 }, (_, i) => `第${i + 1}种问法`)],
      ['包邮吗？', []],
    ]);
    expect(await similarOf('similar.xlsx')).toEqual([
      ['发票怎么开？', ['怎么开发票', '能开电子发票吗', '发票在哪申请']],
      ['怎么改密码？', []],
    ]);
    expect(await similarOf('alias.csv')).toEqual([['积分会过期吗？', ['积分有效期多久']]]);
    expect(await similarOf('alias.xlsx')).toEqual([['积分会过期吗？', ['积分有效期多久']]]);
    // The content (what an assistant reads) is still the question and the answer alone.
    const [install] = (await segments(base.id, `&documentId=${docs['similar.csv']!.id}`)).items;
    expect(install!.content).toBe('宽带安装需要多长时间？\n3 个工作日内上门。');
  });

  it('ranks a pair first when the query matches only one of its similar questions', async () => {
    const pairs = (await segments(baseId)).items.filter((s) => s.question !== null);
    const cancel = pairs.find((s) => s.question === '怎么办理宽带退订？')!;
    const modem = pairs.find((s) => s.question === '光猫坏了怎么办？')!;

    // 销户 and 拆机 appear in no question or answer, only in the pair's similar questions.
    for (const query of ['我要销户', '宽带拆机怎么弄']) {
      const result = await hitTest(baseId, query);
      expect(result.segments[0]?.id, query).toBe(cancel.id);
    }
    expect((await hitTest(baseId, '猫的灯不亮')).segments[0]?.id).toBe(modem.id);

    // Asked exactly as a similar question, a pair scores as if asked exactly as its question: 1.
    const exact = await hitTest(baseId, '不想用了怎么销户');
    expect(exact.segments[0]).toMatchObject({ id: cancel.id, score: 1 });
    expect((await hitTest(baseId, '怎么办理宽带退订？')).segments[0]).toMatchObject({
      id: cancel.id,
      score: 1,
    });
    for (const s of exact.segments) expect(s.score).toBeLessThanOrEqual(1);

    // The segment list's keyword search looks at similar questions too.
    const found = await segments(baseId, `&keyword=${encodeURIComponent('销户')}`);
    expect(found.items.map((s) => s.id)).toEqual([cancel.id]);
  });

  it('edits similar questions through PUT and retrieves by the new ones at once', async () => {
    const pairs = (await segments(baseId)).items;
    const hours = pairs.find((s) => s.question === '营业厅几点开门？')!;
    const text = pairs.find((s) => s.question === null)!;
    const put = (id: string, payload: Record<string, unknown>) =>
      t.app.inject({ method: 'PUT', url: api(`/${baseId}/segments/${id}`), headers: owner, payload });

    const scoreOf = async (query: string) =>
      (await hitTest(baseId, query, 10)).segments.find((s) => s.id === hours.id)?.score ?? 0;
    const before = await scoreOf('礼拜天上不上班');
    expect(before).toBeLessThan(0.6);
    const res = await put(hours.id, {
      similarQuestions: [' 礼拜天上不上班 ', '周末营业吗', '周末营业吗', '营业厅几点开门？'],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      question: '营业厅几点开门？',
      similarQuestions: ['礼拜天上不上班', '周末营业吗'],
    });
    expect((await hitTest(baseId, '礼拜天上不上班')).segments[0]).toMatchObject({ id: hours.id, score: 1 });

    // Changing the question keeps the similar questions, and both stay searchable.
    await put(hours.id, { question: '营业时间是几点？' });
    expect((await hitTest(baseId, '周末营业吗')).segments[0]?.id).toBe(hours.id);

    const tooMany = await put(hours.id, {
      similarQuestions: Array.from({ length: 21 }, (_, i) => `问法${i}`),
    });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().message).toContain('相似问最多 20 个');
    const tooLong = await put(hours.id, { similarQuestions: ['长'.repeat(201)] });
    expect(tooLong.json().message).toContain('相似问不能超过 200 个字符');
    const blank = await put(hours.id, { similarQuestions: ['  '] });
    expect(blank.json().message).toContain('相似问不能为空');
    const onText = await put(text.id, { similarQuestions: ['资费多少'] });
    expect(onText.statusCode).toBe(400);
    expect(onText.json().message).toContain('文本分段没有相似问');

    const cleared = await put(hours.id, { similarQuestions: [] });
    expect(cleared.json().data.similarQuestions).toEqual([]);
    expect(await scoreOf('礼拜天上不上班')).toBe(before);
    await put(hours.id, { question: '营业厅几点开门？' });
  });

  it('exports similar questions in a 相似问题 column that imports back into the same pairs, and lists them in md', async () => {
    const before = (await segments(baseId)).items.filter((s) => s.question !== null);
    expect(before.some((s) => s.similarQuestions.length > 1)).toBe(true);
    const exported = (format: string) =>
      t.app.inject({ method: 'GET', url: api(`/${baseId}/export?format=${format}`), headers: owner });
    const csv = await exported('csv');
    const rows = Papa.parse<string[]>(csv.body.replace(/^\uFEFF/, ''), { skipEmptyLines: true }).data;
    expect(rows[0]).toEqual(['问题', '答案', '相似问题']);
    expect(rows[1]).toEqual([
      '怎么办理宽带退订？',
      '请携带身份证到营业厅办理，或拨打 10000。',
      '不想用了怎么销户\n宽带能拆机吗',
    ]);
    const xlsx = await exported('xlsx');
    expect((await readXlsx(xlsx.rawPayload, 3))[1]).toEqual(rows[1]);

    const copy = await createBase('相似问副本');
    await upload(copy.id, [
      { name: 'back.csv', content: csv.rawPayload },
      { name: 'back.xlsx', content: xlsx.rawPayload },
    ]);
    await drainKnowledgeQueue(t.db);
    const pairs = (items: typeof before) => items.map((s) => [s.question, s.answer, s.similarQuestions]);
    expect(pairs((await segments(copy.id)).items)).toEqual([...pairs(before), ...pairs(before)]);

    const md = (await exported('md')).body;
    expect(md).toContain(
      '**问：** 怎么办理宽带退订？\n\n**相似问：**\n\n- 不想用了怎么销户\n- 宽带能拆机吗\n\n**答：** 请携带身份证',
    );
    expect(md).toContain('**问：** 营业厅几点开门？\n\n**答：**');
  });
});

describe('tenant isolation', () => {
  it("keeps another project's member out of this project's bases", async () => {
    const base = await createBase('机密知识库');
    await upload(base.id, [{ name: 'a.csv', content: FAQ_CSV }]);
    await drainKnowledgeQueue(t.db);
    const seg = (await segments(base.id)).items[0]!;
    const countsBefore = await t.db.select({ n: sql<number>`count(*)::int` }).from(knowledgeDocuments);

    // Through project A's path: the membership guard refuses before anything is read.
    const viaA = [
      { method: 'GET' as const, url: api('') },
      { method: 'GET' as const, url: api(`/${base.id}`) },
      { method: 'GET' as const, url: api(`/${base.id}/documents`) },
      { method: 'GET' as const, url: api(`/${base.id}/segments`) },
      { method: 'GET' as const, url: api(`/${base.id}/export?format=csv`) },
      { method: 'POST' as const, url: api(`/${base.id}/hit-test`), payload: { query: '宽带安装' } },
      { method: 'PUT' as const, url: api(`/${base.id}/segments/${seg.id}`), payload: { enabled: false } },
      { method: 'DELETE' as const, url: api(`/${base.id}`) },
    ];
    for (const req of viaA) {
      const res = await t.app.inject({ ...req, headers: outsider });
      expect(res.statusCode, `${req.method} ${req.url}`).toBe(403);
      expect(res.json().message).toBe('无权访问该项目');
    }
    expect((await upload(base.id, [{ name: 'x.txt', content: '注入' }], outsider)).statusCode).toBe(403);

    // Through the outsider's own project: A's ids do not exist there.
    const own = (path: string) => `/api/project/${projectB}/knowledge-bases/${base.id}${path}`;
    const viaB = [
      { method: 'GET' as const, url: own('') },
      { method: 'GET' as const, url: own('/segments') },
      { method: 'GET' as const, url: own('/export?format=md') },
      { method: 'POST' as const, url: own('/hit-test'), payload: { query: '宽带安装' } },
      { method: 'PUT' as const, url: own(`/segments/${seg.id}`), payload: { enabled: false } },
      { method: 'DELETE' as const, url: own('') },
    ];
    for (const req of viaB) {
      const res = await t.app.inject({ ...req, headers: outsider });
      expect(res.statusCode, `${req.method} ${req.url}`).toBe(404);
    }
    const sneaked = await upload(base.id, [{ name: 'x.txt', content: '注入' }], outsider, projectB);
    expect(sneaked.statusCode).toBe(404);

    const countsAfter = await t.db.select({ n: sql<number>`count(*)::int` }).from(knowledgeDocuments);
    expect(countsAfter).toEqual(countsBefore);
    expect((await segments(base.id)).items.find((s) => s.id === seg.id)?.enabled).toBe(true);
    expect((await hitTest(base.id, '宽带安装要多久')).segments.length).toBeGreaterThan(0);
  });
});
