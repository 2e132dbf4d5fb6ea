import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { calls, memberships, projectNumbers } from '../../db/schema';

/** The canvas statistics over recorded flow calls, and numbers answering with a flow. */

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

const node = (id: string, type: string, data: Record<string, unknown> = {}) => ({
  id,
  type,
  position: { x: 0, y: 0 },
  data,
});
const edge = (source: string, sourceHandle: string, target: string) => ({
  id: `${source}-${sourceHandle}-${target}`,
  source,
  sourceHandle,
  target,
});
/** 开始 → 菜单 (1 账单 / 2 报修) → 放音 → 挂机. */
const hotline = {
  nodes: [
    node('start', 'start'),
    node('menu', 'menu', { prompt: '账单请按 1，报修请按 2', options: [{ key: '1' }, { key: '2' }] }),
    node('billing', 'play', { text: '您的账单已发送' }),
    node('repair', 'play', { text: '已为您登记报修' }),
    node('bye', 'hangup'),
  ],
  edges: [
    edge('start', 'next', 'menu'),
    edge('menu', 'key:1', 'billing'),
    edge('menu', 'key:2', 'repair'),
    edge('menu', 'invalid', 'bye'),
    edge('menu', 'timeout', 'bye'),
    edge('billing', 'next', 'bye'),
    edge('repair', 'next', 'bye'),
  ],
};

async function data(headers: Headers, method: 'GET' | 'POST' | 'PUT', path: string, payload?: unknown) {
  const res = await t.app.inject({
    method,
    url: path,
    headers,
    ...(payload ? { payload: payload as object } : {}),
  });
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body}`);
  return res.json().data;
}

async function publishedFlow(headers: Headers, projectId: string, name: string) {
  const base = `/api/project/${projectId}/flows`;
  const flow = await data(headers, 'POST', base, { name });
  await data(headers, 'PUT', `${base}/${flow.id}/draft`, { graph: hotline });
  await data(headers, 'POST', `${base}/${flow.id}/publish`, {});
  return flow.id as string;
}

const step = (nodeId: string, flowId: string | null = null) => ({
  nodeId,
  nodeType: 'play',
  nodeName: '',
  atMs: 0,
  durationMs: 0,
  exit: null,
  input: null,
  output: {},
  detail: '',
  flowId,
});

async function seedCall(
  flowId: string,
  path: (string | [string, string])[],
  options: { hangupBy?: 'callee' | 'assistant' | 'system'; version?: number | null; daysAgo?: number } = {},
) {
  await t.db.insert(calls).values({
    id: randomUUID(),
    projectId: a.projectId,
    direction: 'inbound',
    callerNumber: '13800138000',
    calleeNumber: '02160880001',
    status: 'ended',
    hangupBy: options.hangupBy ?? 'callee',
    startedAt: new Date(Date.now() - (options.daysAgo ?? 1) * 86_400_000),
    flowId,
    flowName: '客服热线',
    flowVersion: options.version === undefined ? 1 : options.version,
    flowPath: path.map((p) => (typeof p === 'string' ? step(p) : step(p[0], p[1]))),
  });
}

describe('flow statistics (节点统计)', () => {
  it('counts per node the calls that reached it and where callers hung up, published calls only', async () => {
    const flowId = await publishedFlow(owner, a.projectId, '客服热线');
    const other = await publishedFlow(owner, a.projectId, '别的流程');
    await seedCall(flowId, ['start', 'menu', 'billing']);
    // The menu twice (a repeat) is still one call that reached it; the assistant ended this one.
    await seedCall(flowId, ['start', 'menu', 'menu', 'repair', 'bye'], { hangupBy: 'assistant' });
    await seedCall(flowId, ['start', 'menu']);
    // Hung up inside a subflow: its own steps do not count, the call ended at this flow's menu.
    await seedCall(flowId, ['start', 'menu', ['start', 'sub-flow'], ['billing', 'sub-flow']]);
    await seedCall(flowId, ['start', 'menu'], { version: null });
    await seedCall(flowId, ['start', 'menu', 'billing'], { daysAgo: 10 });
    await seedCall(other, ['start', 'menu', 'billing']);

    const stats = await data(member, 'GET', `${url}/${flowId}/stats`);
    expect(stats.calls).toBe(4);
    expect(new Date(stats.to).getTime() - new Date(stats.from).getTime()).toBe(7 * 86_400_000);
    expect(stats.nodes).toEqual([
      { nodeId: 'start', reached: 4, hungUp: 0 },
      { nodeId: 'menu', reached: 4, hungUp: 2 },
      { nodeId: 'billing', reached: 1, hungUp: 1 },
      { nodeId: 'repair', reached: 1, hungUp: 0 },
      { nodeId: 'bye', reached: 1, hungUp: 0 },
    ]);

    const from = new Date(Date.now() - 11 * 86_400_000).toISOString();
    const to = new Date(Date.now() - 5 * 86_400_000).toISOString();
    const older = await data(owner, 'GET', `${url}/${flowId}/stats?from=${from}&to=${to}`);
    expect(older).toMatchObject({ from, to, calls: 1 });
    expect(older.nodes.find((n: { nodeId: string }) => n.nodeId === 'billing')).toEqual({
      nodeId: 'billing',
      reached: 1,
      hungUp: 1,
    });

    // The list counts the same traffic: test calls and older calls aside.
    const list = await data(owner, 'GET', url);
    expect(list.items.find((f: { id: string }) => f.id === flowId).calls7d).toBe(4);

    for (const [query, message] of [
      [`from=${to}&to=${from}`, '字段 from：开始时间须早于结束时间'],
      [`from=${new Date(Date.now() - 100 * 86_400_000).toISOString()}`, '字段 from：统计区间不能超过 93 天'],
      ['from=yesterday', '字段 from：开始时间格式不正确'],
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: `${url}/${flowId}/stats?${query}`,
        headers: owner,
      });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().message).toBe(message);
    }
    const foreign = await t.app.inject({
      method: 'GET',
      url: `/api/project/${b.projectId}/flows/${flowId}/stats`,
      headers: outsider,
    });
    expect(foreign.statusCode).toBe(404);
  });
});

describe('numbers answering with a flow (呼入绑定)', () => {
  it('binds a published flow of the project only, names it, and routes the number to it', async () => {
    const inbound = (headers: Headers, projectId: string, number: string, body: unknown) =>
      t.app.inject({
        method: 'PUT',
        url: `/api/project/${projectId}/numbers/${number}/inbound`,
        headers,
        payload: body as object,
      });
    await t.db.insert(projectNumbers).values([
      { projectId: a.projectId, number: '02160880001', label: '总机' },
      { projectId: b.projectId, number: '02160880001', label: '同号' },
    ]);
    const draft = await data(owner, 'POST', url, { name: '未发布' });
    const unpublished = await inbound(owner, a.projectId, '02160880001', { flowId: draft.id });
    expect(unpublished.statusCode).toBe(400);
    expect(unpublished.json().message).toBe('字段 flowId：流程尚未发布，发布后才能接听来电');

    const theirs = await publishedFlow(outsider, b.projectId, '别人的流程');
    const foreign = await inbound(owner, a.projectId, '02160880001', { flowId: theirs });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().message).toBe('字段 flowId：流程不存在或已删除');

    const flowId = await publishedFlow(owner, a.projectId, '总机流程');
    const both = await inbound(owner, a.projectId, '02160880001', { flowId, assistantId: 'x' });
    expect(both.statusCode).toBe(400);
    expect(both.json().message).toContain('一个号码只能绑定小助手或通话流程中的一个');
    const byMember = await inbound(member, a.projectId, '02160880001', { flowId });
    expect(byMember.statusCode).toBe(403);

    const bound = await inbound(owner, a.projectId, '02160880001', { flowId });
    expect(bound.statusCode, bound.body).toBe(200);
    expect(bound.json().data).toMatchObject({
      inboundFlowId: flowId,
      inboundFlowName: '总机流程',
      inboundAssistantId: null,
    });
    const numbers = await data(member, 'GET', `/api/project/${a.projectId}/numbers`);
    expect(numbers[0]).toMatchObject({ inboundFlowId: flowId, inboundFlowName: '总机流程' });
    const list = await data(owner, 'GET', url);
    expect(list.items.find((f: { id: string }) => f.id === flowId).numbers).toEqual(['02160880001']);
    expect(await t.app.runtime.engine.ports.inbound.lookup('02160880001')).toMatchObject({
      projectId: a.projectId,
      flowId,
      assistantId: null,
    });

    // The number reaches project A now: B cannot take it, with its flow or anything else.
    const taken = await inbound(outsider, b.projectId, '02160880001', { flowId: theirs });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().message).toBe('号码 02160880001 的来电已由其他项目接听，不能重复绑定');

    const unbound = await inbound(owner, a.projectId, '02160880001', { flowId: null, assistantId: null });
    expect(unbound.json().data).toMatchObject({ inboundFlowId: null, inboundFlowName: null });
    expect(await t.app.runtime.engine.ports.inbound.lookup('02160880001')).toMatchObject({ flowId: null });
  });
});
