import { randomUUID } from 'node:crypto';
import { FLOW_EXPORT_FORMAT } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { callFlows, callFlowVersions, calls, memberships, projectNumbers } from '../../db/schema';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;
let t: TestApp;
let a: { userId: string; projectId: string };
let b: { userId: string; projectId: string };
let owner: Headers;
let member: Headers;
let outsider: Headers;
let url: string;

beforeAll(async () => {
  t = await createTestApp();
  a = await seedUser(t.db, { email: 'owner@example.com' });
  const m = await seedUser(t.db, { email: 'member@example.com', project: null });
  await t.db.insert(memberships).values({ projectId: a.projectId, userId: m.userId, role: 'member' });
  b = await seedUser(t.db, { email: 'other@example.com' });
  owner = await loginAs(t.app, 'owner@example.com');
  member = await loginAs(t.app, 'member@example.com');
  outsider = await loginAs(t.app, 'other@example.com');
  url = `/api/project/${a.projectId}/flows`;
});
afterAll(() => t?.app.close());

const node = (id: string, type: string, data: Record<string, unknown> = {}, name = '') => ({
  id,
  type,
  name,
  position: { x: 0, y: 0 },
  data,
});
const edge = (source: string, sourceHandle: string, target: string) => ({
  id: `${source}-${sourceHandle}-${target}`,
  source,
  sourceHandle,
  target,
});
/** 开始 → 放音 → 挂机: the smallest flow that publishes. */
const greeting = (text = '您好，欢迎致电星河宽带') => ({
  nodes: [node('start', 'start'), node('hello', 'play', { text }, '欢迎语'), node('bye', 'hangup')],
  edges: [edge('start', 'next', 'hello'), edge('hello', 'next', 'bye')],
});

async function api(
  headers: Headers,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  payload?: unknown,
) {
  return t.app.inject({
    method,
    url: path,
    headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}
async function data(
  headers: Headers,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  payload?: unknown,
) {
  const res = await api(headers, method, path, payload);
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body}`);
  return res.json().data;
}
const flowCount = async () => (await t.db.select().from(callFlows)).length;

/** A published flow of project A, as the editor would leave it. */
async function publishedFlow(name: string, graph: unknown = greeting()) {
  const flow = await data(owner, 'POST', url, { name });
  await data(owner, 'PUT', `${url}/${flow.id}/draft`, { graph });
  await data(owner, 'POST', `${url}/${flow.id}/publish`, { note: '上线' });
  return flow.id as string;
}

describe('call flows (通话流程)', () => {
  it('creates a draft holding a 开始 node, lists it by page and keyword, and offers it to pickers', async () => {
    const created = await data(member, 'POST', url, { name: '客服热线', description: '白天的来电' });
    expect(created).toMatchObject({
      name: '客服热线',
      description: '白天的来电',
      status: 'draft',
      publishedVersion: null,
      published: null,
      numbers: [],
      calls7d: 0,
      nodeCount: 1,
    });
    expect(created.draft.nodes).toEqual([
      expect.objectContaining({ type: 'start', position: { x: 0, y: 0 } }),
    ]);
    expect(created.draft.settings.voice).toBeTruthy();
    await data(owner, 'POST', url, { name: '售后回访' });
    await data(owner, 'POST', url, { name: '客服夜间' });

    const page1 = await data(owner, 'GET', `${url}?page=1&pageSize=2`);
    expect(page1.total).toBeGreaterThanOrEqual(3);
    expect(page1.items).toHaveLength(2);
    const found = await data(owner, 'GET', `${url}?keyword=${encodeURIComponent('客服')}`);
    expect(found.items.map((f: { name: string }) => f.name).sort()).toEqual(['客服夜间', '客服热线']);
    const none = await data(owner, 'GET', `${url}?keyword=${encodeURIComponent('%')}`);
    expect(none.items).toEqual([]);

    const options = await data(member, 'GET', `${url}/options`);
    expect(options).toEqual(
      expect.arrayContaining([{ id: created.id, name: '客服热线', publishedVersion: null }]),
    );

    const blank = await api(owner, 'POST', url, { name: '  ' });
    expect(blank.statusCode).toBe(400);
    expect(blank.json().message).toBe('字段 name：请输入流程名称');
  });

  it('saves drafts with their issues, refuses to publish with errors, publishes once fixed', async () => {
    const flow = await data(owner, 'POST', url, { name: '报修热线' });
    const draftUrl = `${url}/${flow.id}/draft`;

    const half = {
      nodes: [node('start', 'start'), node('menu', 'menu', { prompt: '报修请按 1' }, '主菜单')],
      edges: [edge('start', 'next', 'menu')],
    };
    const saved = await data(member, 'PUT', draftUrl, { graph: half, name: '报修热线（新）' });
    const messages = saved.issues.map((i: { message: string }) => i.message);
    expect(messages).toContain('「主菜单」至少需要两个按键选项，只有一个选项时请用「放音」');
    expect(saved.issues.every((i: { nodeId: string | null }) => i.nodeId === 'menu')).toBe(true);
    const detail = await data(owner, 'GET', `${url}/${flow.id}`);
    expect(detail.name).toBe('报修热线（新）');
    expect(detail.issues).toEqual(saved.issues);

    const refused = await api(owner, 'POST', `${url}/${flow.id}/publish`, { note: '第一次' });
    expect(refused.statusCode).toBe(400);
    const errors = saved.issues.filter((i: { severity: string }) => i.severity === 'error');
    expect(refused.json().message).toBe(
      `流程有 ${errors.length} 个错误，修正后才能发布：${errors[0].message}`,
    );
    expect((await data(owner, 'GET', `${url}/${flow.id}/versions`)).length).toBe(0);

    const duplicate = await api(owner, 'PUT', draftUrl, {
      graph: { nodes: [node('start', 'start'), node('start', 'hangup')], edges: [] },
    });
    expect(duplicate.statusCode).toBe(400);
    expect(duplicate.json().message).toBe('字段 graph.nodes.1.id：节点标识 start 重复');
    const badType = await api(owner, 'PUT', draftUrl, { graph: { nodes: [node('x', 'dance')], edges: [] } });
    expect(badType.statusCode).toBe(400);
    expect(badType.json().message).toContain('字段 graph.nodes.0');
    expect(badType.json().message).toContain('节点类型不支持');
    // Refused saves left the draft as it was.
    expect((await data(owner, 'GET', `${url}/${flow.id}`)).draft.nodes).toHaveLength(2);

    await data(owner, 'PUT', draftUrl, { graph: greeting() });
    const published = await data(member, 'POST', `${url}/${flow.id}/publish`, { note: '第一次' });
    expect(published).toMatchObject({ status: 'published', publishedVersion: 1, issues: [] });
    expect(published.published).toEqual(published.draft);
  });

  it('tracks unpublished changes, keeps versions, rolls back, and calls keep the version they started on', async () => {
    const flowId = await publishedFlow('版本测试', greeting('第一版'));
    const draftUrl = `${url}/${flowId}/draft`;
    await data(owner, 'PUT', draftUrl, { graph: greeting('第二版') });
    expect((await data(owner, 'GET', `${url}/${flowId}`)).status).toBe('changed');
    // Saving the live graph again (keys in another order) is no change at all.
    const same = greeting('第一版');
    const reordered = {
      edges: same.edges.map((e) => ({
        target: e.target,
        sourceHandle: e.sourceHandle,
        source: e.source,
        id: e.id,
      })),
      nodes: same.nodes,
    };
    await data(owner, 'PUT', draftUrl, { graph: reordered });
    expect((await data(owner, 'GET', `${url}/${flowId}`)).status).toBe('published');

    await data(owner, 'PUT', draftUrl, { graph: greeting('第二版') });
    await data(owner, 'POST', `${url}/${flowId}/publish`, { note: '改欢迎语' });
    const versions = await data(member, 'GET', `${url}/${flowId}/versions`);
    expect(versions).toEqual([
      expect.objectContaining({ version: 2, note: '改欢迎语', live: true, publishedByName: 'owner' }),
      expect.objectContaining({ version: 1, note: '上线', live: false }),
    ]);
    const v1 = await data(owner, 'GET', `${url}/${flowId}/versions/1`);
    expect(v1.nodes[1].data.text).toBe('第一版');
    expect((await api(owner, 'GET', `${url}/${flowId}/versions/9`)).statusCode).toBe(404);

    // A call that started on v1 runs v1 to its end; new calls get v2; 模拟来电 gets the draft.
    const flows = t.app.runtime.engine.ports.flows!;
    expect((await flows.forCall(a.projectId, flowId, 1)).graph.nodes[1]).toMatchObject({
      data: { text: '第一版' },
    });
    const live = await flows.forCall(a.projectId, flowId);
    expect(live).toMatchObject({ flowId, name: '版本测试', version: 2 });
    expect(live.graph.nodes[1]).toMatchObject({ data: { text: '第二版' } });
    await data(owner, 'PUT', draftUrl, { graph: greeting('草稿') });
    const draft = await flows.forCall(a.projectId, flowId, 'draft');
    expect(draft.version).toBeNull();
    expect(draft.graph.nodes[1]).toMatchObject({ data: { text: '草稿' } });
    await expect(flows.forCall(b.projectId, flowId)).rejects.toThrow('流程不存在或已删除');
    await expect(flows.forCall(a.projectId, flowId, 7)).rejects.toThrow('没有版本 v7');

    const rolled = await data(member, 'POST', `${url}/${flowId}/versions/1/rollback`);
    expect(rolled).toMatchObject({ status: 'published', publishedVersion: 1 });
    expect(rolled.draft.nodes[1].data.text).toBe('第一版');
    expect(rolled.published).toEqual(rolled.draft);
    expect((await flows.forCall(a.projectId, flowId)).version).toBe(1);
    expect(
      (await data(owner, 'GET', `${url}/${flowId}/versions`)).map((v: { live: boolean }) => v.live),
    ).toEqual([false, true]);
  });

  it('publishes subflows and assistant nodes only when they are this project’s and published', async () => {
    const sub = await data(owner, 'POST', url, { name: '查询余额' });
    await data(owner, 'PUT', `${url}/${sub.id}/draft`, { graph: greeting('您的余额是 100 元') });
    const main = await data(owner, 'POST', url, { name: '总机' });
    const withSubflow = (flowId: string) => ({
      nodes: [
        node('start', 'start'),
        node('sub', 'subflow', { flowId }, '余额子流程'),
        node('bye', 'hangup'),
      ],
      edges: [edge('start', 'next', 'sub'), edge('sub', 'next', 'bye')],
    });
    const saved = await data(owner, 'PUT', `${url}/${main.id}/draft`, { graph: withSubflow(sub.id) });
    expect(saved.issues).toEqual([
      expect.objectContaining({
        nodeId: 'sub',
        severity: 'error',
        message: '「余额子流程」：子流程「查询余额」尚未发布，发布后才能被调用',
      }),
    ]);
    const refused = await api(owner, 'POST', `${url}/${main.id}/publish`, {});
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe(
      '流程有 1 个错误，修正后才能发布：「余额子流程」：子流程「查询余额」尚未发布，发布后才能被调用',
    );
    await data(owner, 'POST', `${url}/${sub.id}/publish`, {});
    expect((await data(owner, 'POST', `${url}/${main.id}/publish`, {})).publishedVersion).toBe(1);

    // Another project's flow is as good as none.
    const foreign = await data(outsider, 'POST', `/api/project/${b.projectId}/flows`, { name: '别人的' });
    await data(owner, 'PUT', `${url}/${main.id}/draft`, { graph: withSubflow(foreign.id) });
    const foreignRefused = await api(owner, 'POST', `${url}/${main.id}/publish`, {});
    expect(foreignRefused.json().message).toContain('「余额子流程」：子流程不存在或已删除');

    // The live 总机 calls 查询余额: 查询余额 calling 总机 back would never end.
    const loopSaved = await data(owner, 'PUT', `${url}/${sub.id}/draft`, {
      graph: { ...withSubflow(main.id), nodes: withSubflow(main.id).nodes.map((n) => ({ ...n, name: '' })) },
    });
    expect(loopSaved.issues.map((i: { message: string }) => i.message)).toEqual([
      '「子流程」：子流程「总机」的已发布版本又调用了本流程，通话会无限循环',
    ]);
    const loop = await api(owner, 'POST', `${url}/${sub.id}/publish`, {});
    expect(loop.statusCode).toBe(400);
    expect((await data(owner, 'GET', `${url}/${sub.id}`)).publishedVersion).toBe(1);

    const assistant = await data(owner, 'POST', `/api/project/${a.projectId}/assistants`, {
      name: '报修助手',
      templateKey: 'customer-follow-up',
    });
    const withAssistant = (assistantId: string) => ({
      nodes: [
        node('start', 'start'),
        node('agent', 'assistant', { assistantId }, '转助手'),
        node('bye', 'hangup'),
      ],
      edges: [edge('start', 'next', 'agent'), edge('agent', 'next', 'bye'), edge('agent', 'transfer', 'bye')],
    });
    const agentFlow = await data(owner, 'POST', url, { name: '助手接听' });
    await data(owner, 'PUT', `${url}/${agentFlow.id}/draft`, { graph: withAssistant(assistant.id) });
    const unpublished = await api(owner, 'POST', `${url}/${agentFlow.id}/publish`, {});
    expect(unpublished.json().message).toBe(
      '流程有 1 个错误，修正后才能发布：「转助手」：智能小助手「报修助手」尚未发布，发布后才能接听',
    );
    await data(owner, 'POST', `/api/project/${a.projectId}/assistants/${assistant.id}/publish`, {});
    expect((await data(owner, 'POST', `${url}/${agentFlow.id}/publish`, {})).publishedVersion).toBe(1);
  });

  it('copies a flow as an unpublished draft named 副本', async () => {
    const flowId = await publishedFlow('夜间热线');
    const copy = await data(member, 'POST', `${url}/${flowId}/copy`);
    const source = await data(owner, 'GET', `${url}/${flowId}`);
    expect(copy).toMatchObject({
      name: '夜间热线 副本',
      status: 'draft',
      publishedVersion: null,
      published: null,
    });
    expect(copy.id).not.toBe(flowId);
    expect(copy.draft).toEqual(source.draft);
  });

  it('refuses to delete a flow a number answers with or a live flow calls; deletes it otherwise', async () => {
    const flowId = await publishedFlow('要删除的流程');
    await t.db
      .insert(projectNumbers)
      .values({ projectId: a.projectId, number: '02160880001', label: '总机' });
    await data(owner, 'PUT', `/api/project/${a.projectId}/numbers/02160880001/inbound`, {
      assistantId: null,
      flowId,
    });
    const bound = await api(member, 'DELETE', `${url}/${flowId}`);
    expect(bound.statusCode).toBe(409);
    expect(bound.json().message).toBe('流程正在接听号码 02160880001 的来电，请先在号码管理中解绑');
    await data(owner, 'PUT', `/api/project/${a.projectId}/numbers/02160880001/inbound`, {
      assistantId: null,
      flowId: null,
    });

    const caller = await publishedFlow('调用方', {
      nodes: [node('start', 'start'), node('sub', 'subflow', { flowId }), node('bye', 'hangup')],
      edges: [edge('start', 'next', 'sub'), edge('sub', 'next', 'bye')],
    });
    const used = await api(owner, 'DELETE', `${url}/${flowId}`);
    expect(used.statusCode).toBe(409);
    expect(used.json().message).toBe(
      '流程正被「调用方」的已发布版本用作子流程，请先在该流程中移除并重新发布',
    );
    await data(owner, 'PUT', `${url}/${caller}/draft`, { graph: greeting() });
    await data(owner, 'POST', `${url}/${caller}/publish`, {});

    // A call it answered keeps its snapshot after the flow is gone.
    const callId = randomUUID();
    await t.db.insert(calls).values({
      id: callId,
      projectId: a.projectId,
      direction: 'inbound',
      callerNumber: '13800138000',
      calleeNumber: '02160880001',
      status: 'ended',
      startedAt: new Date(),
      flowId,
      flowName: '要删除的流程',
      flowVersion: 1,
    });
    expect((await api(owner, 'DELETE', `${url}/${flowId}`)).statusCode).toBe(200);
    expect(await t.db.select().from(callFlows).where(eq(callFlows.id, flowId))).toEqual([]);
    expect(await t.db.select().from(callFlowVersions).where(eq(callFlowVersions.flowId, flowId))).toEqual([]);
    const call = await data(owner, 'GET', `/api/project/${a.projectId}/calls/${callId}`);
    expect(call.flow).toMatchObject({ flowName: '要删除的流程', flowVersion: 1 });
    expect((await api(owner, 'GET', `${url}/${flowId}`)).statusCode).toBe(404);
  });

  it('exports the draft and imports it back as a new draft flow', async () => {
    const flowId = await publishedFlow('导出测试');
    const file = await data(member, 'GET', `${url}/${flowId}/export`);
    expect(file).toMatchObject({ format: FLOW_EXPORT_FORMAT, version: 1, name: '导出测试' });
    const imported = await data(member, 'POST', `${url}/import`, file);
    expect(imported).toMatchObject({ name: '导出测试', status: 'draft', publishedVersion: null, issues: [] });
    expect(imported.id).not.toBe(flowId);
    expect(imported.draft).toEqual(file.graph);
    // Ids of another project are kept for the user to replace; validation points at them.
    const foreign = {
      ...file,
      graph: {
        nodes: [
          node('start', 'start'),
          node('sub', 'subflow', { flowId: 'gone' }, '外部子流程'),
          node('bye', 'hangup'),
        ],
        edges: [edge('start', 'next', 'sub'), edge('sub', 'next', 'bye')],
      },
    };
    const kept = await data(owner, 'POST', `${url}/import`, foreign);
    expect(kept.draft.nodes[1].data.flowId).toBe('gone');
    expect(kept.issues).toEqual([
      expect.objectContaining({ nodeId: 'sub', message: '「外部子流程」：子流程不存在或已删除' }),
    ]);
  });

  it('refuses a malformed or oversized import with the place in the file, creating nothing', async () => {
    const before = await flowCount();
    const valid = { format: FLOW_EXPORT_FORMAT, version: 1, name: '导入', graph: greeting() };
    const cases: [unknown, string][] = [
      [
        { ...valid, format: 'other' },
        `导入文件格式不正确：format 不是通话流程导出文件（format 须为 ${FLOW_EXPORT_FORMAT}）`,
      ],
      [{ ...valid, version: 2 }, '导入文件格式不正确：version 导出文件版本不支持'],
      [
        { ...valid, graph: { ...valid.graph, nodes: [...valid.graph.nodes, node('x', 'dance')] } },
        '导入文件格式不正确：graph.nodes.3.type 节点类型不支持',
      ],
      [{ ...valid, graph: { nodes: 'many' } }, '导入文件格式不正确：graph.nodes'],
      [
        { ...valid, graph: { ...valid.graph, nodes: [...valid.graph.nodes, node('bye', 'hangup')] } },
        '导入文件格式不正确：graph.nodes.3.id 节点标识 bye 重复',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await api(owner, 'POST', `${url}/import`, body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.json().message).toContain(message);
    }
    const notJson = await t.app.inject({
      method: 'POST',
      url: `${url}/import`,
      headers: { ...owner, 'content-type': 'application/json' },
      payload: '{"format": "callpilot.flow",',
    });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().message).toBe('请求体不是合法的 JSON');
    const huge = await t.app.inject({
      method: 'POST',
      url: `${url}/import`,
      headers: { ...owner, 'content-type': 'application/json' },
      payload: JSON.stringify({ ...valid, description: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expect(huge.statusCode).toBe(400);
    expect(huge.json().message).toBe('导入文件不能超过 2 MB');
    expect(await flowCount()).toBe(before);
  });

  it('answers 模拟来电 of a flow, refuses another project’s flow', async () => {
    const flowId = await publishedFlow('模拟来电流程');
    const res = await api(owner, 'POST', `${url}/${flowId}/test-call`, { script: ['1'] });
    // Until the runtime runs drafts on the simulated carrier it says so; either way a call id or 503.
    if (res.statusCode === 200) expect(res.json().data.callId).toEqual(expect.any(String));
    else {
      expect(res.statusCode).toBe(503);
      expect(res.json().message).toBe('模拟来电暂不可用');
    }
    const bad = await api(owner, 'POST', `${url}/${flowId}/test-call`, { callerNumber: '123' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('字段 callerNumber：主叫号码须为 11 位手机号');
    const foreign = await api(outsider, 'POST', `/api/project/${b.projectId}/flows/${flowId}/test-call`, {});
    expect(foreign.statusCode).toBe(404);
  });

  it('keeps every flow route closed to members of other projects', async () => {
    const flowId = await publishedFlow('机密流程');
    const own = `/api/project/${b.projectId}/flows`;
    const routes: ['GET' | 'POST' | 'PUT' | 'DELETE', string, unknown?][] = [
      ['GET', ''],
      ['GET', '/options'],
      ['POST', '', { name: '闯入' }],
      ['POST', '/import', { format: FLOW_EXPORT_FORMAT, version: 1, name: '闯入', graph: greeting() }],
      ['GET', `/${flowId}`],
      ['PUT', `/${flowId}/draft`, { graph: greeting('篡改') }],
      ['POST', `/${flowId}/publish`, {}],
      ['GET', `/${flowId}/versions`],
      ['GET', `/${flowId}/versions/1`],
      ['POST', `/${flowId}/versions/1/rollback`],
      ['POST', `/${flowId}/copy`],
      ['GET', `/${flowId}/export`],
      ['GET', `/${flowId}/stats`],
      ['POST', `/${flowId}/test-call`, {}],
      ['DELETE', `/${flowId}`],
      ['GET', '/audio'],
    ];
    const before = await flowCount();
    for (const [method, path, payload] of routes) {
      // Project A's URL: the project itself is refused.
      const direct = await api(outsider, method, `${url}${path}`, payload);
      expect(direct.statusCode, `${method} ${path}`).toBe(403);
      // Their own project's URL with A's flow: it does not exist for them.
      if (path.startsWith(`/${flowId}`)) {
        const sideways = await api(outsider, method, `${own}${path}`, payload);
        expect(sideways.statusCode, `${method} own${path}`).toBe(404);
      }
    }
    expect(await flowCount()).toBe(before);
    const kept = await data(owner, 'GET', `${url}/${flowId}`);
    expect(kept).toMatchObject({ status: 'published', publishedVersion: 1 });
    expect(kept.draft.nodes[1].data.text).toBe('您好，欢迎致电星河宽带');
    expect((await data(outsider, 'GET', `${own}/options`)).map((f: { id: string }) => f.id)).not.toContain(
      flowId,
    );
  });
});
