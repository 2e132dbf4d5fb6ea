import { KNOWLEDGE_TERMS_MAX } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import Papa from 'papaparse';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, seedTwoProjects } from '../../../test/helpers';
import { knowledgeBases, knowledgeTerms } from '../../db/schema';
import { encodeGbk, makeXlsx, readXlsx } from './fixtures.test-helper';
import { loadProjectTerms } from './terms.service';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

async function setup() {
  current = await createTestApp();
  const cast = await seedTwoProjects(current.db, current.app);
  return { ...current, ...cast, url: `/api/project/${cast.a.projectId}/knowledge-terms` };
}

/** A one-file multipart body under the field the console sends (`file`). */
function upload(name: string, content: Buffer | string) {
  const boundary = `----terms${Math.random().toString(16).slice(2)}`;
  const payload = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    typeof content === 'string' ? Buffer.from(content) : content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

describe('口语词典', () => {
  it('creates, lists with a keyword over standards and variants, edits and deletes entries', async () => {
    const { app, owner, url } = await setup();
    const create = (standard: string, variants: string[]) =>
      app.inject({ method: 'POST', url, headers: owner, payload: { standard, variants } });
    const cat = await create('光猫', ['猫', ' 猫子 ', '猫']);
    expect(cat.statusCode).toBe(200);
    expect(cat.json().data).toMatchObject({ standard: '光猫', variants: ['猫', '猫子'] });
    expect((await create('余额', ['话费'])).statusCode).toBe(200);
    expect((await create('取消', ['退订', '不要了'])).statusCode).toBe(200);

    const list = async (query = '') =>
      (await app.inject({ url: `${url}${query}`, headers: owner })).json().data;
    expect((await list()).total).toBe(3);
    expect((await list('?keyword=猫子')).items.map((t: { standard: string }) => t.standard)).toEqual([
      '光猫',
    ]);
    expect((await list('?keyword=余')).items.map((t: { standard: string }) => t.standard)).toEqual(['余额']);
    expect(await list('?pageSize=2&page=2')).toMatchObject({ total: 3, page: 2, items: [{}] });

    const id = cat.json().data.id;
    const edited = await app.inject({
      method: 'PUT',
      url: `${url}/${id}`,
      headers: owner,
      payload: { standard: '光猫', variants: ['猫', '调制解调器'] },
    });
    expect(edited.statusCode).toBe(200);
    expect(edited.json().data.variants).toEqual(['猫', '调制解调器']);

    expect((await app.inject({ method: 'DELETE', url: `${url}/${id}`, headers: owner })).statusCode).toBe(
      200,
    );
    const gone = await app.inject({ method: 'DELETE', url: `${url}/${id}`, headers: owner });
    expect(gone.statusCode).toBe(404);
    expect(gone.json().message).toBe('词条不存在');
    expect((await list()).total).toBe(2);
  });

  it('refuses a duplicate standard, a variant of another standard and bad words, changing nothing', async () => {
    const { app, db, owner, url } = await setup();
    const create = (standard: unknown, variants: unknown) =>
      app.inject({ method: 'POST', url, headers: owner, payload: { standard, variants } });
    const first = await create('光猫', ['猫', '猫子']);
    expect(first.statusCode).toBe(200);
    await create('余额', ['话费']);
    await create('WiFi', ['无线网']);

    const refusals: [unknown, unknown, number, string | RegExp][] = [
      ['光猫', ['调制解调器'], 409, '标准词已存在：光猫'],
      ['路由器', ['猫'], 400, '口语说法“猫”已属于标准词“光猫”'],
      ['猫子', ['猫崽'], 400, '标准词“猫子”已是标准词“光猫”的口语说法'],
      ['账户', ['余额'], 400, '口语说法“余额”已是标准词，不能再作为口语说法'],
      ['', ['猫'], 400, /标准词/],
      ['光 猫', ['猫'], 400, /标准词不能包含空格/],
      ['宽带', [], 400, /请至少填写 1 个口语说法/],
      ['宽带', ['宽带'], 400, /口语说法不能与标准词相同/],
      ['宽带', ['网 络'], 400, /口语说法不能包含空格/],
      ['宽带', Array.from({ length: 21 }, (_, i) => `词${i}`), 400, /口语说法最多 20 个/],
      ['宽'.repeat(21), ['宽'], 400, /标准词不能超过 20 个字符/],
      // Latin words compare without case, as callers' words reach search.
      ['wifi', ['歪佛'], 409, '标准词已存在：wifi'],
      ['路由器', ['WIFI'], 400, '口语说法“WIFI”已是标准词，不能再作为口语说法'],
      ['Modem', ['modem'], 400, '口语说法不能与标准词相同'],
    ];
    for (const [standard, variants, status, message] of refusals) {
      const res = await create(standard, variants);
      expect(res.statusCode, `${standard}`).toBe(status);
      expect(res.json().message).toMatch(message);
    }
    // The same rules hold on edit, the entry itself excepted.
    const id = first.json().data.id;
    const edit = (variants: string[]) =>
      app.inject({
        method: 'PUT',
        url: `${url}/${id}`,
        headers: owner,
        payload: { standard: '光猫', variants },
      });
    expect((await edit(['猫', '猫子', '猫猫'])).statusCode).toBe(200);
    const clash = await edit(['话费']);
    expect(clash.statusCode).toBe(400);
    expect(clash.json().message).toBe('口语说法“话费”已属于标准词“余额”');

    const rows = await db.select().from(knowledgeTerms).orderBy(knowledgeTerms.standard);
    expect(rows.map((r) => [r.standard, r.variants])).toEqual([
      ['WiFi', ['无线网']],
      ['余额', ['话费']],
      ['光猫', ['猫', '猫子', '猫猫']],
    ]);
  });

  it(`stops at ${KNOWLEDGE_TERMS_MAX} entries a project`, async () => {
    const { app, db, a, owner, url } = await setup();
    await db.insert(knowledgeTerms).values(
      Array.from({ length: KNOWLEDGE_TERMS_MAX }, (_, i) => ({
        id: `t${i}`,
        projectId: a.projectId,
        standard: `标准${i}`,
        variants: [`说法${i}`],
      })),
    );
    const res = await app.inject({
      method: 'POST',
      url,
      headers: owner,
      payload: { standard: '新词', variants: ['新'] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe(`口语词典最多 ${KNOWLEDGE_TERMS_MAX} 条，请先删除不再需要的词条`);
  });

  it('keeps projects apart: outsiders get 403, another project’s entry through one’s own project 404', async () => {
    const { app, b, owner, memberHeaders, outsider, url } = await setup();
    const mine = (
      await app.inject({
        method: 'POST',
        url,
        headers: owner,
        payload: { standard: '光猫', variants: ['猫'] },
      })
    ).json().data.id;
    // A plain member of the project may read and edit its dictionary.
    expect((await app.inject({ url, headers: memberHeaders })).statusCode).toBe(200);

    const body = { standard: '宽带', variants: ['网'] };
    const outsiderCalls = [
      { method: 'GET' as const, url },
      { method: 'POST' as const, url, payload: body },
      { method: 'GET' as const, url: `${url}/builtin` },
      { method: 'GET' as const, url: `${url}/export` },
      { method: 'PUT' as const, url: `${url}/${mine}`, payload: body },
      { method: 'DELETE' as const, url: `${url}/${mine}` },
    ];
    for (const req of outsiderCalls) {
      const res = await app.inject({ ...req, headers: outsider });
      expect(res.statusCode, `${req.method} ${req.url}`).toBe(403);
    }
    const imported = await app.inject({
      method: 'POST',
      url: `${url}/import`,
      ...withAuth(upload('t.csv', '标准词,口语说法\n宽带,网'), outsider),
    });
    expect(imported.statusCode).toBe(403);

    const otherUrl = `/api/project/${b.projectId}/knowledge-terms`;
    const theirs = (
      await app.inject({
        method: 'POST',
        url: otherUrl,
        headers: outsider,
        payload: { standard: '余额', variants: ['话费'] },
      })
    ).json().data.id;
    for (const req of [
      { method: 'PUT' as const, url: `${url}/${theirs}`, payload: body },
      { method: 'DELETE' as const, url: `${url}/${theirs}` },
    ]) {
      const res = await app.inject({ ...req, headers: owner });
      expect(res.statusCode, `${req.method} ${req.url}`).toBe(404);
    }
    // Another project's words do not clash with this project's.
    const same = await app.inject({
      method: 'POST',
      url,
      headers: owner,
      payload: { standard: '余额', variants: ['话费'] },
    });
    expect(same.statusCode).toBe(200);
    expect((await app.inject({ url: otherUrl, headers: outsider })).json().data.total).toBe(1);
  });

  it('lists the built-in entries read-only', async () => {
    const { app, owner, url } = await setup();
    const res = await app.inject({ url: `${url}/builtin`, headers: owner });
    expect(res.statusCode).toBe(200);
    expect(Array.isArray(res.json().data)).toBe(true);
    for (const entry of res.json().data) {
      expect(entry).toEqual({ standard: expect.any(String), variants: expect.any(Array) });
    }
  });

  it('imports a CSV: new entries, variants merged into existing ones, rejected rows with reasons', async () => {
    const { app, db, owner, url } = await setup();
    await app.inject({
      method: 'POST',
      url,
      headers: owner,
      payload: { standard: '光猫', variants: ['猫'] },
    });
    await app.inject({
      method: 'POST',
      url,
      headers: owner,
      payload: { standard: '余额', variants: ['话费'] },
    });
    const csv = [
      '标准词,口语说法,备注',
      '光猫,猫|猫子｜调制解调器,合并',
      '取消,"退订、不要了,不办了，算了"',
      '网速慢,"网卡\n卡顿"',
      '余额,话费',
      ',没有标准词',
      '宽带,',
      '路由器,猫',
      '话费,钱',
      '取消,退掉',
      '',
      '网络,网卡',
      '光猫,MODEM',
      '光猫,modem|猫',
    ].join('\n');
    const res = await app.inject({
      method: 'POST',
      url: `${url}/import`,
      ...withAuth(upload('词典.csv', csv), owner),
    });
    expect(res.statusCode).toBe(200);
    const result = res.json().data;
    expect(result).toMatchObject({ created: 2, merged: 1, unchanged: 2 });
    expect(result.rejected).toEqual([
      { row: 6, standard: '', variants: '没有标准词', reason: '请输入标准词' },
      { row: 7, standard: '宽带', variants: '', reason: '请至少填写 1 个口语说法' },
      { row: 8, standard: '路由器', variants: '猫', reason: '口语说法“猫”已属于标准词“光猫”' },
      { row: 9, standard: '话费', variants: '钱', reason: '标准词“话费”已是标准词“余额”的口语说法' },
      { row: 12, standard: '网络', variants: '网卡', reason: '口语说法“网卡”已属于标准词“网速慢”' },
    ]);
    const rows = await db.select().from(knowledgeTerms).orderBy(knowledgeTerms.standard);
    expect(Object.fromEntries(rows.map((r) => [r.standard, r.variants]))).toEqual({
      光猫: ['猫', '猫子', '调制解调器', 'MODEM'],
      余额: ['话费'],
      取消: ['退订', '不要了', '不办了', '算了', '退掉'],
      网速慢: ['网卡', '卡顿'],
    });
  });

  it('imports xlsx and GBK CSV, round-trips its own export, and refuses a file without the headers', async () => {
    const { app, db, owner, url } = await setup();
    const xlsx = await makeXlsx([
      ['标准词', '口语说法'],
      ['光猫', '猫,猫子'],
    ]);
    const fromXlsx = await app.inject({
      method: 'POST',
      url: `${url}/import`,
      ...withAuth(upload('t.xlsx', xlsx), owner),
    });
    expect(fromXlsx.json().data).toMatchObject({ created: 1, rejected: [] });
    const gbk = encodeGbk('标准词,口语说法\r\n余额,话费|电话费\r\n');
    const fromGbk = await app.inject({
      method: 'POST',
      url: `${url}/import`,
      ...withAuth(upload('t.csv', gbk), owner),
    });
    expect(fromGbk.json().data).toMatchObject({ created: 1, rejected: [] });

    const csv = await app.inject({ url: `${url}/export?format=csv`, headers: owner });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    const parsed = Papa.parse<string[]>(csv.body.replace(/^\uFEFF/, ''), { skipEmptyLines: true }).data;
    expect(parsed).toEqual([
      ['标准词', '口语说法'],
      ['余额', '话费|电话费'],
      ['光猫', '猫|猫子'],
    ]);
    const xlsxOut = await app.inject({ url: `${url}/export?format=xlsx`, headers: owner });
    expect(await readXlsx(xlsxOut.rawPayload)).toEqual(parsed);

    // The export imported again changes nothing.
    const again = await app.inject({
      method: 'POST',
      url: `${url}/import`,
      ...withAuth(upload('t.csv', csv.rawPayload), owner),
    });
    expect(again.json().data).toEqual({ created: 0, merged: 0, unchanged: 2, rejected: [] });

    for (const [name, content, message] of [
      ['t.csv', '词,说法\n光猫,猫', '字段 file：第一行须为表头“标准词”“口语说法”'],
      ['t.csv', '标准词,口语说法\n', '字段 file：文件中只有表头，没有词条'],
      [
        't.txt',
        '标准词,口语说法\n宽带,网',
        '字段 file：不支持的文件类型，仅支持 .csv 或 .xlsx 文件，第一行须为表头“标准词”“口语说法”',
      ],
    ] as const) {
      const res = await app.inject({
        method: 'POST',
        url: `${url}/import`,
        ...withAuth(upload(name, content), owner),
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe(message);
    }
    const huge = Buffer.alloc(2 * 1024 * 1024 + 1, 'a');
    const tooLarge = await app.inject({
      method: 'POST',
      url: `${url}/import`,
      ...withAuth(upload('t.csv', huge), owner),
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json().message).toBe('字段 file：文件不能超过 2 MB');
    expect(await db.select().from(knowledgeTerms)).toHaveLength(2);
  });

  it('serves loadProjectTerms from memory until a write, and bumps every base of the project on a write', async () => {
    const { app, db, a, b, owner, url } = await setup();
    await db.insert(knowledgeBases).values([
      { id: 'kb-a1', projectId: a.projectId, name: '一' },
      { id: 'kb-a2', projectId: a.projectId, name: '二' },
      { id: 'kb-b', projectId: b.projectId, name: '三' },
    ]);
    const revisions = async () =>
      Object.fromEntries(
        (
          await db.select({ id: knowledgeBases.id, revision: knowledgeBases.revision }).from(knowledgeBases)
        ).map((r) => [r.id, r.revision]),
      );
    const before = await revisions();

    expect(await loadProjectTerms(db, a.projectId)).toEqual([]);
    const created = await app.inject({
      method: 'POST',
      url,
      headers: owner,
      payload: { standard: '光猫', variants: ['猫'] },
    });
    const warm = await loadProjectTerms(db, a.projectId);
    expect(warm).toEqual([{ standard: '光猫', variants: ['猫'] }]);
    expect(await loadProjectTerms(db, a.projectId)).toBe(warm);

    // A write behind the service's back (another process) is not seen while the cache is warm...
    await db
      .update(knowledgeTerms)
      .set({ variants: ['猫', '猫子'] })
      .where(eq(knowledgeTerms.projectId, a.projectId));
    expect(await loadProjectTerms(db, a.projectId)).toEqual([{ standard: '光猫', variants: ['猫'] }]);
    // ...but any write through the service is.
    const id = created.json().data.id;
    await app.inject({
      method: 'PUT',
      url: `${url}/${id}`,
      headers: owner,
      payload: { standard: '光猫', variants: ['猫', '猫崽'] },
    });
    expect(await loadProjectTerms(db, a.projectId)).toEqual([{ standard: '光猫', variants: ['猫', '猫崽'] }]);
    await app.inject({
      method: 'POST',
      url: `${url}/import`,
      ...withAuth(upload('t.csv', '标准词,口语说法\n余额,话费'), owner),
    });
    expect((await loadProjectTerms(db, a.projectId)).map((t) => t.standard)).toEqual(['余额', '光猫']);
    await app.inject({ method: 'DELETE', url: `${url}/${id}`, headers: owner });
    expect(await loadProjectTerms(db, a.projectId)).toEqual([{ standard: '余额', variants: ['话费'] }]);

    const after = await revisions();
    expect(after['kb-a1']).toBe(before['kb-a1']! + 4);
    expect(after['kb-a2']).toBe(before['kb-a2']! + 4);
    expect(after['kb-b']).toBe(before['kb-b']);

    // A refused write or an import that adds nothing is not a change.
    await app.inject({
      method: 'POST',
      url,
      headers: owner,
      payload: { standard: '余额', variants: ['钱'] },
    });
    await app.inject({
      method: 'POST',
      url: `${url}/import`,
      ...withAuth(upload('t.csv', '标准词,口语说法\n余额,话费'), owner),
    });
    expect(await revisions()).toEqual(after);
  });
});

function withAuth(body: ReturnType<typeof upload>, auth: Record<string, string>) {
  return { payload: body.payload, headers: { ...body.headers, ...auth } };
}
