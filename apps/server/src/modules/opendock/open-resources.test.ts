import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedApiKey } from '../../../test/api-keys';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { doNotCall } from '../../db/schema';
import { seedDemoContent } from '../demo/demo-content';
import { multipart } from '../knowledge/fixtures.test-helper';
import { drainKnowledgeQueue } from '../knowledge/worker';

let t: Awaited<ReturnType<typeof createTestApp>>;
const a = { projectId: '', assistantId: '', knowledgeBaseId: '', key: '' };
const b = { projectId: '', assistantId: '', knowledgeBaseId: '', key: '' };

beforeAll(async () => {
  t = await createTestApp();
  await t.app.ready();
  for (const [project, email] of [
    [a, 'crm@example.com'],
    [b, 'other@example.com'],
  ] as const) {
    const owner = await seedUser(t.db, { email });
    const demo = await seedDemoContent(t.db, owner.projectId, owner.userId);
    Object.assign(project, {
      projectId: owner.projectId,
      assistantId: demo.publishedAssistantId,
      knowledgeBaseId: demo.knowledgeBaseId,
      key: (await seedApiKey(t.db, { projectId: owner.projectId })).secret,
    });
  }
  await drainKnowledgeQueue(t.db);
}, 60_000);
afterAll(async () => {
  await t?.app.close();
});

const api = async (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object, key = a.key) => {
  const res = await t.app.inject({
    method,
    url: `/opendock/v1${url}`,
    headers: bearer(key),
    ...(payload ? { payload } : {}),
  });
  return { status: res.statusCode, body: res.json() };
};

describe('assistants through the open API', () => {
  it('lists each assistant with its live version and the published versions with their variables', async () => {
    const res = await api('GET', '/assistants?pageSize=50');
    expect(res.status).toBe(200);
    const { items, total } = res.body.data;
    expect(total).toBe(3);
    const published = items.find((item: { id: string }) => item.id === a.assistantId);
    expect(published).toMatchObject({ name: '宽带客户回访', status: 'enabled', liveVersion: 1 });
    expect(published.versions).toHaveLength(1);
    expect(published.versions[0]).toMatchObject({ version: 1, note: '演示项目初始版本' });
    expect(published.versions[0].variables.map((v: { name: string; required: boolean }) => v.name)).toEqual([
      '客户姓名',
      '公司名称',
      '产品名称',
    ]);
    const drafts = items.filter((item: { id: string }) => item.id !== a.assistantId);
    for (const draft of drafts) expect(draft).toMatchObject({ liveVersion: null, versions: [] });

    // A second published version shows first; the live one follows the publish.
    const console = await loginAs(t.app, 'crm@example.com');
    const publish = await t.app.inject({
      method: 'POST',
      url: `/api/project/${a.projectId}/assistants/${a.assistantId}/publish`,
      headers: console,
      payload: { note: '第二版' },
    });
    expect(publish.statusCode, publish.body).toBe(200);
    const one = await api('GET', `/assistants/${a.assistantId}`);
    expect(one.body.data.liveVersion).toBe(2);
    expect(one.body.data.versions.map((v: { version: number; note: string }) => [v.version, v.note])).toEqual(
      [
        [2, '第二版'],
        [1, '演示项目初始版本'],
      ],
    );

    expect(await api('GET', '/assistants?keyword=回访')).toMatchObject({ body: { data: { total: 1 } } });
    const foreign = await api('GET', `/assistants/${b.assistantId}`);
    expect(foreign).toMatchObject({ status: 404, body: { message: '小助手不存在或已删除' } });
  });
});

describe('knowledge through the open API', () => {
  it('uploads a document, reports its indexing status, and answers a hit test', async () => {
    const list = await api('GET', '/knowledge-bases');
    expect(list.body.data.items.map((kb: { id: string }) => kb.id)).toEqual([a.knowledgeBaseId]);

    const form = multipart([
      {
        name: '会员积分.md',
        content: '# 会员积分\n\n会员积分可以兑换流量包，每 1000 积分兑换 1GB 国内流量，积分有效期两年。\n',
      },
      { name: '安装包.exe', content: Buffer.from([0x4d, 0x5a, 0x90, 0x00]) },
    ]);
    const uploaded = await t.app.inject({
      method: 'POST',
      url: `/opendock/v1/knowledge-bases/${a.knowledgeBaseId}/documents`,
      headers: { ...bearer(a.key), ...form.headers },
      payload: form.payload,
    });
    expect(uploaded.statusCode, uploaded.body).toBe(200);
    const result = uploaded.json().data;
    expect(result.accepted).toHaveLength(1);
    expect(result.accepted[0]).toMatchObject({ fileName: '会员积分.md', fileType: 'md', status: 'queued' });
    expect(result.rejected).toEqual([{ fileName: '安装包.exe', reason: expect.stringMatching(/不支持/) }]);

    const documentId = result.accepted[0].id as string;
    await drainKnowledgeQueue(t.db);
    const status = await api('GET', `/knowledge-bases/${a.knowledgeBaseId}/documents/${documentId}`);
    expect(status.body.data).toMatchObject({ id: documentId, status: 'ready', progress: 100 });
    expect(status.body.data.segmentCount).toBeGreaterThan(0);

    const hits = await api('POST', `/knowledge-bases/${a.knowledgeBaseId}/hit-test`, {
      query: '积分怎么兑换流量',
      topK: 3,
    });
    expect(hits.status).toBe(200);
    expect(hits.body.data.segments[0].content).toContain('每 1000 积分兑换 1GB');
    expect(hits.body.data.segments[0].score).toBeGreaterThan(0);

    const notMultipart = await api('POST', `/knowledge-bases/${a.knowledgeBaseId}/documents`, { files: [] });
    expect(notMultipart.status).toBe(400);
    expect(
      (await api('POST', `/knowledge-bases/${a.knowledgeBaseId}/hit-test`, { query: '' })).body.message,
    ).toBe('字段 query：请输入测试问题');
    // Another project's base and document are not found.
    expect(
      (await api('GET', `/knowledge-bases/${a.knowledgeBaseId}/documents/${documentId}`, undefined, b.key))
        .status,
    ).toBe(404);
    expect(
      (await api('POST', `/knowledge-bases/${a.knowledgeBaseId}/hit-test`, { query: '积分' }, b.key)).status,
    ).toBe(404);
  });
});

describe('the do-not-call list through the open API', () => {
  it('adds numbers in bulk, reports existing and malformed ones, lists and removes them', async () => {
    await api('POST', '/do-not-call', { phones: ['13900139000'], reason: '投诉' });
    const res = await api('POST', '/do-not-call', {
      phones: ['+86 139-0013-9001', '13900139000', 'abc', '021-6088 0000', '13900139001', '4008001234'],
      reason: '客户要求不再来电',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual({
      added: ['13900139001', '02160880000', '4008001234'],
      existing: ['13900139000'],
      rejected: [{ index: 2, phone: 'abc', message: '号码格式不正确' }],
    });
    const [kept] = await t.db
      .select()
      .from(doNotCall)
      .where(and(eq(doNotCall.projectId, a.projectId), eq(doNotCall.phone, '13900139000')));
    expect(kept).toMatchObject({ reason: '投诉', source: 'manual' });

    const list = await api('GET', '/do-not-call?phone=1390013');
    expect(list.body.data.items.map((e: { phone: string }) => e.phone).sort()).toEqual([
      '13900139000',
      '13900139001',
    ]);
    // Project B's list is its own.
    expect((await api('GET', '/do-not-call', undefined, b.key)).body.data.total).toBe(0);
    expect((await api('DELETE', '/do-not-call/13900139001', undefined, b.key)).status).toBe(404);

    const removed = await api('DELETE', `/do-not-call/${encodeURIComponent('+86 139 0013 9001')}`);
    expect(removed.body.data).toEqual({ phone: '13900139001', removed: true });
    const again = await api('DELETE', '/do-not-call/13900139001');
    expect(again).toMatchObject({ status: 404, body: { message: '该号码不在免打扰名单中' } });

    const tooMany = await api('POST', '/do-not-call', {
      phones: Array.from({ length: 1001 }, () => '13900139000'),
    });
    expect(tooMany.body.message).toBe('字段 phones：每次最多添加 1000 个号码');
  });
});
