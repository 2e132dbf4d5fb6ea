import { randomUUID } from 'node:crypto';
import { assistantConfig, type FlowSimulationState } from '@callpilot/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { callFlows, calls, doNotCall, outbox } from '../../db/schema';
import { createAssistant, publishAssistant } from '../assistants/assistants.service';
import { findTemplate } from '../assistants/assistants.templates';
import { MAX_SIMULATIONS_PER_PROJECT, TOO_MANY_SIMULATIONS } from './flow-simulation';

type Headers = Record<string, string>;
let t: Awaited<ReturnType<typeof createTestApp>>;
let owner: Headers;
let outsider: Headers;
let projectA: string;
let projectB: string;
let flowA: string;
let flowB: string;
let assistantId: string;

/** 开始 → 欢迎语 → 主菜单: 1 → 账单 → 挂机; 2 → 说出问题 (断网 / 未匹配 / 超时) → 挂机. */
const graph = {
  nodes: [
    { id: 'start', type: 'start', data: {} },
    { id: 'greet', type: 'play', name: '欢迎语', data: { text: '您好，欢迎致电。' } },
    {
      id: 'menu',
      type: 'menu',
      name: '主菜单',
      data: {
        prompt: '查询账单请按 1，故障报修请按 2。',
        options: [
          { key: '1', label: '账单' },
          { key: '2', label: '报修' },
        ],
        timeoutSec: 5,
        maxRetries: 2,
        timeoutPrompt: '抱歉，没有收到您的按键。',
      },
    },
    { id: 'bill', type: 'play', name: '账单', data: { text: '您本月账单 128 元。' } },
    {
      id: 'ask',
      type: 'speech',
      name: '说出问题',
      data: {
        prompt: '请说出您遇到的问题。',
        variable: 'problem',
        intents: [{ id: 'net', name: '断网', keywords: ['断网', '上不了网'] }],
      },
    },
    { id: 'bye', type: 'hangup', name: '挂机', data: { text: '再见。', reason: '服务结束' } },
  ],
  edges: [
    ['start', 'next', 'greet'],
    ['greet', 'next', 'menu'],
    ['menu', 'key:1', 'bill'],
    ['menu', 'key:2', 'ask'],
    ['menu', 'invalid', 'bye'],
    ['menu', 'timeout', 'bye'],
    ['bill', 'next', 'bye'],
    ['ask', 'intent:net', 'bye'],
    ['ask', 'nomatch', 'bye'],
    ['ask', 'timeout', 'bye'],
  ].map(([source, sourceHandle, target]) => ({
    id: `${source}-${sourceHandle}`,
    source,
    sourceHandle,
    target,
  })),
};

beforeAll(async () => {
  t = await createTestApp();
  const a = await seedUser(t.db, { email: 'owner@example.com' });
  const b = await seedUser(t.db, { email: 'other@example.com' });
  projectA = a.projectId;
  projectB = b.projectId;
  flowA = randomUUID();
  flowB = randomUUID();
  await t.db.insert(callFlows).values([
    { id: flowA, projectId: projectA, name: '客服热线', draft: { nodes: [], edges: [] } },
    { id: flowB, projectId: projectB, name: '别人的流程', draft: { nodes: [], edges: [] } },
  ]);
  const followUp = findTemplate('customer-follow-up')!;
  const assistant = await createAssistant(t.db, projectA, a.userId, {
    name: '报修助手',
    description: '',
    use: 'both',
    status: 'enabled',
    config: assistantConfig.parse({
      ...followUp.config,
      conversation: { ...followUp.config.conversation, transferNumber: '4008006688' },
    }),
  });
  await publishAssistant(t.db, projectA, assistant.id, a.userId, '');
  assistantId = assistant.id;
  owner = await loginAs(t.app, 'owner@example.com');
  outsider = await loginAs(t.app, 'other@example.com');
});
afterAll(() => t.app.close());

const simulationsUrl = (projectId = projectA, flowId = flowA) =>
  `/api/project/${projectId}/flows/${flowId}/simulations`;

async function start(headers = owner, payload: object = { graph }) {
  const res = await t.app.inject({ method: 'POST', url: simulationsUrl(), headers, payload });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as FlowSimulationState;
}

async function send(id: string, input: object): Promise<FlowSimulationState> {
  const res = await t.app.inject({
    method: 'POST',
    url: `${simulationsUrl()}/${id}/input`,
    headers: owner,
    payload: input,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

const end = (id: string, headers = owner, url = simulationsUrl()) =>
  t.app.inject({ method: 'DELETE', url: `${url}/${id}`, headers });

describe('模拟 in the flow editor', () => {
  it('runs the posted draft to the menu, re-prompts on a timeout and follows a key to the end', async () => {
    const first = await start();
    expect(first.waiting).toEqual({ nodeId: 'menu', kind: 'digits', timeoutSec: 5 });
    expect(first.ended).toBeNull();
    expect(first.steps.map((s) => s.nodeId)).toEqual(['start', 'greet']);
    expect(first.prompts.map((p) => [p.nodeId, p.text])).toEqual([
      ['greet', '您好，欢迎致电。'],
      ['menu', '查询账单请按 1，故障报修请按 2。'],
    ]);
    expect(first.variables.caller).toBe('13800138000');

    const retried = await send(first.simulationId, { kind: 'timeout' });
    expect(retried.waiting?.nodeId).toBe('menu');
    expect(retried.prompts.slice(2).map((p) => p.text)).toEqual([
      '抱歉，没有收到您的按键。',
      '查询账单请按 1，故障报修请按 2。',
    ]);

    const done = await send(first.simulationId, { kind: 'digits', value: '1' });
    expect(done.waiting).toBeNull();
    expect(done.ended).toEqual({ reason: '流程结束：服务结束', nodeId: 'bye' });
    expect(done.steps.map((s) => [s.nodeId, s.exit])).toEqual([
      ['start', 'next'],
      ['greet', 'next'],
      ['menu', 'key:1'],
      ['bill', 'next'],
      ['bye', null],
    ]);
    const menu = done.steps[2]!;
    expect(menu.input).toBe('1');
    expect(menu.variables.digits).toBe('1');
    expect(done.variables.digits).toBe('1');
    expect(done.prompts.map((p) => p.text)).toContain('您本月账单 128 元。');
    // Nothing of a simulation reaches the call records.
    expect(await t.db.select().from(calls)).toEqual([]);

    // Over is over: more input is refused, and the session can be closed.
    const late = await t.app.inject({
      method: 'POST',
      url: `${simulationsUrl()}/${first.simulationId}/input`,
      headers: owner,
      payload: { kind: 'digits', value: '2' },
    });
    expect(late.statusCode).toBe(409);
    expect((await end(first.simulationId)).statusCode).toBe(200);
    expect((await end(first.simulationId)).statusCode).toBe(404);
  });

  it('matches what the caller says on a speech node, and ends when the caller hangs up', async () => {
    const sim = await start();
    const asking = await send(sim.simulationId, { kind: 'digits', value: '2' });
    expect(asking.waiting).toMatchObject({ nodeId: 'ask', kind: 'speech' });
    const matched = await send(sim.simulationId, { kind: 'speech', value: '我家宽带断网了' });
    const step = matched.steps.find((s) => s.nodeId === 'ask')!;
    expect(step.exit).toBe('intent:net');
    expect(step.input).toBe('我家宽带断网了');
    expect(matched.variables.problem).toBe('我家宽带断网了');
    expect(matched.ended?.nodeId).toBe('bye');

    const other = await start();
    const hungUp = await send(other.simulationId, { kind: 'hangup' });
    expect(hungUp.ended).toEqual({ reason: '来电方已挂机', nodeId: 'menu' });
    expect(hungUp.steps.at(-1)).toMatchObject({ nodeId: 'menu', exit: null });
    await end(sim.simulationId);
    await end(other.simulationId);
  });

  it('talks to an assistant over the same line and only says what a real call would send or dial', async () => {
    const handOff = {
      nodes: [
        { id: 'start', type: 'start', data: {} },
        {
          id: 'notice',
          type: 'sms',
          name: '受理短信',
          data: { to: '{{caller}}', content: '您的来电已受理' },
        },
        {
          id: 'helper',
          type: 'assistant',
          name: '报修助手',
          data: {
            assistantId,
            variables: [
              { name: '客户姓名', value: '王先生' },
              { name: '公司名称', value: '星河宽带' },
              { name: '产品名称', value: '千兆宽带' },
            ],
          },
        },
        { id: 'agent', type: 'transfer', name: '人工', data: { target: '4008006688' } },
        { id: 'bye', type: 'hangup', data: { reason: '结束' } },
      ],
      edges: [
        ['start', 'next', 'notice'],
        ['notice', 'next', 'helper'],
        ['helper', 'next', 'bye'],
        ['helper', 'transfer', 'agent'],
        ['agent', 'busy', 'bye'],
        ['agent', 'no_answer', 'bye'],
        ['agent', 'failed', 'bye'],
      ].map(([source, sourceHandle, target]) => ({
        id: `${source}-${sourceHandle}`,
        source,
        sourceHandle,
        target,
      })),
    };
    const sim = await start(owner, { graph: handOff, callerNumber: '13900001111' });
    expect(sim.steps.find((s) => s.nodeId === 'notice')?.detail).toContain('（模拟）短信未实际发送');
    expect(sim.waiting?.nodeId).toBe('helper');
    expect(sim.prompts.at(-1)).toMatchObject({ nodeId: 'helper' });
    expect(sim.prompts.at(-1)!.text).toContain('王先生');

    const transferred = await send(sim.simulationId, { kind: 'speech', value: '我要转人工' });
    expect(transferred.steps.find((s) => s.nodeId === 'helper')?.exit).toBe('transfer');
    expect(transferred.ended).toEqual({ reason: '（模拟）已转接至 4008006688', nodeId: 'agent' });
    expect(transferred.steps.at(-1)?.detail).toContain('（模拟）已转接至 4008006688');
    // Nothing left the simulation: no SMS queued, no call recorded, nobody opted out.
    expect(await t.db.select().from(outbox)).toEqual([]);
    expect(t.sms).toEqual([]);
    expect(await t.db.select().from(calls)).toEqual([]);
    expect(await t.db.select().from(doNotCall)).toEqual([]);
    await end(sim.simulationId);
  });

  it('speaks each prompt as a WAV in the offline voice', async () => {
    const sim = await start();
    const url = `${simulationsUrl()}/${sim.simulationId}/prompts/1`;
    expect(sim.prompts[1]!.audioUrl).toBe(url);
    const wav = await t.app.inject({ method: 'GET', url, headers: owner });
    expect(wav.statusCode, wav.body).toBe(200);
    expect(wav.headers['content-type']).toBe('audio/wav');
    expect(wav.rawPayload.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(wav.rawPayload.length).toBeGreaterThan(8000);
    const missing = await t.app.inject({
      method: 'GET',
      url: `${simulationsUrl()}/${sim.simulationId}/prompts/99`,
      headers: owner,
    });
    expect(missing.statusCode).toBe(404);
    await end(sim.simulationId);
  }, 20_000);

  it("keeps one project's simulations from another", async () => {
    const sim = await start();
    // Another project's member: not through A's path (no membership), nor through their own.
    const theirs = `/api/project/${projectB}/flows/${flowA}/simulations`;
    for (const [headers, url] of [
      [outsider, simulationsUrl()],
      [outsider, theirs],
    ] as const) {
      const input = await t.app.inject({
        method: 'POST',
        url: `${url}/${sim.simulationId}/input`,
        headers,
        payload: { kind: 'hangup' },
      });
      expect([403, 404]).toContain(input.statusCode);
      const prompt = await t.app.inject({
        method: 'GET',
        url: `${url}/${sim.simulationId}/prompts/0`,
        headers,
      });
      expect([403, 404]).toContain(prompt.statusCode);
      expect([403, 404]).toContain((await end(sim.simulationId, headers, url)).statusCode);
    }
    // Their own project cannot simulate a flow of ours, nor we one of theirs.
    const foreign = await t.app.inject({
      method: 'POST',
      url: theirs,
      headers: outsider,
      payload: { graph },
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().message).toBe('流程不存在或已删除');
    const ours = await t.app.inject({
      method: 'POST',
      url: simulationsUrl(projectA, flowB),
      headers: owner,
      payload: { graph },
    });
    expect(ours.statusCode).toBe(404);
    // The session is untouched: it still waits at the menu.
    expect((await send(sim.simulationId, { kind: 'digits', value: '1' })).ended?.nodeId).toBe('bye');
    await end(sim.simulationId);
  });

  it('refuses bad input naming the field, and too many simulations at once', async () => {
    const badGraph = await t.app.inject({
      method: 'POST',
      url: simulationsUrl(),
      headers: owner,
      payload: { graph: { ...graph, nodes: [{ id: 'x', type: 'teleport' }] } },
    });
    expect(badGraph.statusCode).toBe(400);
    expect(badGraph.json().message).toContain('graph.nodes.0');
    expect(badGraph.json().message).toContain('节点类型不支持');

    const sim = await start();
    const badKeys = await t.app.inject({
      method: 'POST',
      url: `${simulationsUrl()}/${sim.simulationId}/input`,
      headers: owner,
      payload: { kind: 'digits', value: '1a' },
    });
    expect(badKeys.statusCode).toBe(400);
    expect(badKeys.json().message).toBe('字段 value：按键须为数字、* 或 #');
    // The refused input changed nothing: the flow still waits at the menu.
    expect((await send(sim.simulationId, { kind: 'digits', value: '1' })).ended).not.toBeNull();
    await end(sim.simulationId);

    const open: string[] = [];
    for (let i = 0; i < MAX_SIMULATIONS_PER_PROJECT; i++) open.push((await start()).simulationId);
    const refused = await t.app.inject({
      method: 'POST',
      url: simulationsUrl(),
      headers: owner,
      payload: { graph },
    });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toBe(TOO_MANY_SIMULATIONS);
    // Another project is not held back by ours.
    const elsewhere = await t.app.inject({
      method: 'POST',
      url: simulationsUrl(projectB, flowB),
      headers: outsider,
      payload: { graph },
    });
    expect(elsewhere.statusCode).toBe(200);
    await end(open.pop()!);
    await start();
  });
});
