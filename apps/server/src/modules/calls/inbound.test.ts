import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type CallDetail, type CallEvent, type FlowGraph, flowGraph } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { memberships, outbox, projectLimits, users } from '../../db/schema';
import { VirtualClock } from '../../engine/clock';
import { seedDemoContent } from '../demo/demo-content';

/**
 * Inbound calls (呼入) through the API, on the simulated carrier with a clock moved by hand: a
 * number bound to an assistant or a call flow, 模拟来电 (the flow editor's too), refusals,
 * concurrentCallin, hang-ups and isolation.
 */
let t: Awaited<ReturnType<typeof createTestApp>>;
let clock: VirtualClock;
let dataDir: string;
let projectId: string;
let otherProjectId: string;
let assistantId: string;
let draftAssistantId: string;
let headers: Record<string, string>;
let otherHeaders: Record<string, string>;
let memberHeaders: Record<string, string>;

const NUMBER = '02161234567';
const SPARE = '02161230000';

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'inbound-'));
  clock = new VirtualClock({ startAt: Date.now() });
  t = await createTestApp({ env: { DATA_DIR: dataDir }, clock });
  await t.app.ready();
  const owner = await seedUser(t.db, { email: 'ops@example.com' });
  projectId = owner.projectId;
  headers = await loginAs(t.app, 'ops@example.com');
  const demo = await seedDemoContent(t.db, projectId, owner.userId);
  assistantId = demo.publishedAssistantId;
  draftAssistantId = (
    await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/assistants`,
      headers,
      payload: { name: '未发布助手', use: 'outbound', templateKey: 'customer-follow-up' },
    })
  ).json().data?.id;
  const other = await seedUser(t.db, { email: 'other@example.com' });
  otherProjectId = other.projectId;
  otherHeaders = await loginAs(t.app, 'other@example.com');
  const member = await seedUser(t.db, { email: 'member@example.com', project: null });
  await t.db.insert(memberships).values({ projectId, userId: member.userId, role: 'member' });
  memberHeaders = await loginAs(t.app, 'member@example.com');
  for (const [number, h] of [
    [NUMBER, headers],
    [SPARE, headers],
    [NUMBER, otherHeaders],
  ] as const) {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/project/${h === headers ? projectId : otherProjectId}/numbers`,
      headers: h,
      payload: { number, label: '客服热线' },
    });
    expect(res.statusCode, res.body).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await t?.app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const bind = (number: string, id: string | null, h = headers, project = projectId) =>
  t.app.inject({
    method: 'PUT',
    url: `/api/project/${project}/numbers/${number}/inbound`,
    headers: h,
    payload: { assistantId: id },
  });
const ring = (number: string, persona = 'interested', h = headers, project = projectId) =>
  t.app.inject({
    method: 'POST',
    url: `/api/project/${project}/calls/test-inbound`,
    headers: h,
    payload: { number, persona },
  });
const detail = async (callId: string) =>
  (await t.app.inject({ method: 'GET', url: `/api/project/${projectId}/calls/${callId}`, headers })).json()
    .data;
/** Moves the simulated clock until the call reaches `status` (or a minute of call time passed). */
async function until(callId: string, status: string) {
  for (let i = 0; i < 600 && (await detail(callId)).status !== status; i++) await clock.advance(500);
  return detail(callId);
}

/** The call once its analysis (summary) is stored too: that step follows the end. */
async function untilAnalysed(callId: string) {
  for (let i = 0; i < 600 && !(await detail(callId)).summary; i++) await clock.advance(500);
  return detail(callId);
}

describe('binding a number for inbound calls', () => {
  it('needs a published assistant of the project, an owner or admin, and a number no other project answers', async () => {
    const draft = await bind(NUMBER, draftAssistantId);
    expect(draft.statusCode).toBe(400);
    expect(draft.json().message).toContain('尚未发布');
    expect((await bind(NUMBER, assistantId, memberHeaders)).statusCode).toBe(403);
    // Another project's member can neither bind this project's number nor use its assistant.
    expect((await bind(NUMBER, assistantId, otherHeaders)).statusCode).toBe(403);
    expect((await bind(NUMBER, assistantId, otherHeaders, otherProjectId)).statusCode).toBe(400);

    const bound = await bind(NUMBER, assistantId);
    expect(bound.statusCode, bound.body).toBe(200);
    expect(bound.json().data).toMatchObject({ number: NUMBER, inboundAssistantId: assistantId });
    expect(bound.json().data.inboundAssistantName).toBeTruthy();
    const list = await t.app.inject({ method: 'GET', url: `/api/project/${projectId}/numbers`, headers });
    expect(list.json().data.find((n: { number: string }) => n.number === NUMBER)).toMatchObject({
      inboundAssistantId: assistantId,
    });

    // The other project owns the same number too, but its calls already reach this project.
    const otherAssistant = await seedDemoContent(t.db, otherProjectId, (await userId('other@example.com'))!);
    const taken = await bind(NUMBER, otherAssistant.publishedAssistantId, otherHeaders, otherProjectId);
    expect(taken.statusCode).toBe(409);
    expect(taken.json().message).toContain('其他项目');
  });
});

async function userId(email: string) {
  const [row] = await t.db.select({ id: users.id }).from(users).where(eq(users.email, email));
  return row?.id;
}

describe('模拟来电', () => {
  it('is answered by the bound assistant, recorded as 呼入 and followed live', async () => {
    const events: CallEvent[] = [];
    const unsubscribe = t.app.runtime.hub.subscribe(projectId, (e) => events.push(e));
    const res = await ring(NUMBER, 'interested');
    expect(res.statusCode, res.body).toBe(200);
    const callId = res.json().data.callId as string;
    // Answered at once, as an inbound line is: no ringing to wait through.
    expect(['ringing', 'in_progress']).toContain((await detail(callId)).status);
    const call = await until(callId, 'ended');
    unsubscribe();
    expect(call).toMatchObject({
      direction: 'inbound',
      calleeNumber: NUMBER,
      assistantId,
      assistantVersion: 1,
      persona: 'interested',
      endReason: 'completed',
      hangupBy: 'assistant',
    });
    expect(call.callerNumber).toMatch(/^1\d{10}$/);
    expect(call.turns.length).toBeGreaterThan(2);
    expect(call.turns[0].speaker).toBe('assistant');
    const mine = events.filter((e) => ('call' in e ? e.call.id : e.callId) === callId).map((e) => e.type);
    expect(mine[0]).toBe('started');
    expect(mine).toContain('answered');
    expect(mine).toContain('turn');
    expect(mine).toContain('ended');
    // The list filters it as inbound.
    const inbound = await t.app.inject({
      method: 'GET',
      url: `/api/project/${projectId}/calls?direction=inbound`,
      headers,
    });
    expect(inbound.json().data.items.map((c: { id: string }) => c.id)).toContain(callId);
  });

  it('ends when the caller hangs up (挂断 from the console), or when the caller does on their own', async () => {
    const silent = (await ring(NUMBER, 'silent')).json().data.callId as string;
    await until(silent, 'in_progress');
    const hang = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/calls/${silent}/hangup`,
      headers,
    });
    expect(hang.json().data).toEqual({ hungUp: true });
    expect(await until(silent, 'ended')).toMatchObject({ endReason: 'callee_hangup', hangupBy: 'callee' });

    const leaving = (await ring(NUMBER, 'hangs_up')).json().data.callId as string;
    expect(await until(leaving, 'ended')).toMatchObject({ endReason: 'callee_hangup', hangupBy: 'callee' });
  });

  it('a number without a binding refuses the call and records why', async () => {
    const res = await ring(SPARE);
    expect(res.statusCode, res.body).toBe(200);
    const call = await until(res.json().data.callId, 'ended');
    expect(call).toMatchObject({ direction: 'inbound', endReason: 'not_bound', answeredAt: null, turns: [] });
  });

  it('beyond concurrentCallin the caller hears busy, counted across the project, and nothing more is admitted', async () => {
    await t.db
      .update(projectLimits)
      .set({ hasBalance: true, concurrentCallin: 1 })
      .where(eq(projectLimits.projectId, projectId));
    const first = (await ring(NUMBER, 'silent')).json().data.callId as string;
    const second = (await ring(NUMBER, 'interested')).json().data.callId as string;
    expect(await detail(second)).toMatchObject({
      status: 'ended',
      endReason: 'callin_limit',
      answeredAt: null,
    });
    expect((await detail(first)).status).not.toBe('ended');
    await until(first, 'ended');
    // The line is free again.
    const third = (await ring(NUMBER, 'interested')).json().data.callId as string;
    expect((await until(third, 'ended')).endReason).toBe('completed');
    await t.db
      .update(projectLimits)
      .set({ hasBalance: false, concurrentCallin: 0 })
      .where(eq(projectLimits.projectId, projectId));
  });

  it("another project's member cannot ring this project's numbers, and a number not in the project is a 404", async () => {
    expect((await ring(NUMBER, 'interested', otherHeaders)).statusCode).toBe(403);
    const foreign = await ring('02169999999');
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().message).toContain('不是本项目的号码');
    const bad = await ring(NUMBER, 'busy');
    expect(bad.statusCode).toBe(400);
  });
});

describe('呼入 answered by a call flow', () => {
  const FLOW_NUMBER = '02161239000';
  let flowId: string;
  const menuFlow = (billLine: string): FlowGraph =>
    flowGraph.parse({
      nodes: [
        { id: 'start', type: 'start' },
        {
          id: 'menu',
          type: 'menu',
          name: '主菜单',
          data: {
            prompt: '查询账单请按1，报修请按2。',
            options: [
              { key: '1', label: '账单' },
              { key: '2', label: '报修' },
            ],
          },
        },
        { id: 'bill', type: 'play', name: '账单查询', data: { text: billLine } },
        { id: 'repair', type: 'play', name: '报修登记', data: { text: '已为您登记报修。' } },
        { id: 'bye', type: 'hangup', name: '结束', data: { reason: '已处理' } },
      ],
      edges: [
        { id: 'e1', source: 'start', sourceHandle: 'next', target: 'menu' },
        { id: 'e2', source: 'menu', sourceHandle: 'key:1', target: 'bill' },
        { id: 'e3', source: 'menu', sourceHandle: 'key:2', target: 'repair' },
        { id: 'e4', source: 'menu', sourceHandle: 'invalid', target: 'bye' },
        { id: 'e5', source: 'menu', sourceHandle: 'timeout', target: 'bye' },
        { id: 'e6', source: 'bill', sourceHandle: 'next', target: 'bye' },
        { id: 'e7', source: 'repair', sourceHandle: 'next', target: 'bye' },
      ],
    });
  const must = async (method: 'POST' | 'PUT', url: string, payload: unknown) => {
    const res = await t.app.inject({
      method,
      url: `/api/project/${projectId}${url}`,
      headers,
      payload: payload as object,
    });
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(200);
    return res.json().data;
  };
  const testCall = (flow: string, project = projectId, h = headers) =>
    t.app.inject({
      method: 'POST',
      url: `/api/project/${project}/flows/${flow}/test-call`,
      headers: h,
      payload: { script: ['1'] },
    });
  const route = (call: CallDetail) => call.flow?.steps.map((s) => `${s.nodeId}:${s.exit ?? '-'}`);

  beforeAll(async () => {
    await must('POST', '/numbers', { number: FLOW_NUMBER, label: '流程热线' });
    flowId = (await must('POST', '/flows', { name: '客服热线' })).id;
    await must('PUT', `/flows/${flowId}/draft`, { graph: menuFlow('已发布：您本月账单一百元。') });
    await must('POST', `/flows/${flowId}/publish`, { note: '上线' });
    await must('PUT', `/numbers/${FLOW_NUMBER}/inbound`, { assistantId: null, flowId });
    // Edited since: the draft differs from the live version.
    await must('PUT', `/flows/${flowId}/draft`, { graph: menuFlow('草稿：您本月账单一百二十元。') });
  });

  it('a caller of the bound number hears the published version, whatever the draft says', async () => {
    const res = await ring(FLOW_NUMBER, 'interested');
    expect(res.statusCode, res.body).toBe(200);
    const call: CallDetail = await until(res.json().data.callId, 'ended');
    expect(call).toMatchObject({ direction: 'inbound', endReason: 'completed', assistantId: null });
    expect(call.flow).toMatchObject({ flowId, flowName: '客服热线', flowVersion: 1 });
    // The interested caller presses the first key the menu offers.
    expect(route(call)).toEqual(['start:next', 'menu:key:1', 'bill:next', 'bye:-']);
    expect(call.turns.map((turn) => turn.dtmf ?? turn.text)).toEqual([
      '查询账单请按1，报修请按2。',
      '1',
      '已发布：您本月账单一百元。',
    ]);
  });

  it('the editor’s 模拟来电 runs the draft with the scripted caller, recorded as a test call', async () => {
    const res = await testCall(flowId);
    expect(res.statusCode, res.body).toBe(200);
    await until(res.json().data.callId, 'ended');
    const call: CallDetail = await untilAnalysed(res.json().data.callId);
    expect(call).toMatchObject({ direction: 'inbound', endReason: 'completed', calleeNumber: FLOW_NUMBER });
    expect(call.flow).toMatchObject({ flowId, flowVersion: null });
    expect(route(call)).toEqual(['start:next', 'menu:key:1', 'bill:next', 'bye:-']);
    expect(call.turns.map((turn) => turn.text)).toContain('草稿：您本月账单一百二十元。');
    // No assistant talked: the path is the summary.
    expect(call.summary).toBe('按键 1 → 账单查询 → 挂机（已处理）');
  });

  it("another project's member can neither place a test call on the flow nor ring its number", async () => {
    const before = (
      await t.app.inject({ method: 'GET', url: `/api/project/${projectId}/calls`, headers })
    ).json().data.total;
    expect((await testCall(flowId, otherProjectId, otherHeaders)).statusCode).toBe(404);
    expect((await testCall(flowId, projectId, otherHeaders)).statusCode).toBe(403);
    expect((await ring(FLOW_NUMBER, 'interested', otherHeaders)).statusCode).toBe(403);
    const after = (
      await t.app.inject({ method: 'GET', url: `/api/project/${projectId}/calls`, headers })
    ).json().data.total;
    expect(after).toBe(before);
  });
});

describe('the call repository announces every write', () => {
  it('a human grade and tags are published as updated events', async () => {
    const callId = (await ring(NUMBER, 'interested')).json().data.callId as string;
    await until(callId, 'ended');
    await t.app.runtime.idle();
    const events: CallEvent[] = [];
    const unsubscribe = t.app.runtime.hub.subscribe(projectId, (e) => events.push(e), callId);
    const graded = await t.app.inject({
      method: 'PUT',
      url: `/api/project/${projectId}/calls/${callId}/grade`,
      headers,
      payload: { grade: 'A' },
    });
    expect(graded.statusCode, graded.body).toBe(200);
    await t.app.inject({
      method: 'PUT',
      url: `/api/project/${projectId}/calls/${callId}/tags`,
      headers,
      payload: { tags: ['回访'] },
    });
    unsubscribe();
    // The recording worker may announce its own update in between (it runs on its own schedule):
    // what matters is that the grade and the tags each come with one.
    expect(events.every((e) => e.type === 'updated')).toBe(true);
    const updates = events as Extract<CallEvent, { type: 'updated' }>[];
    const grade = updates.findIndex((e) => e.call.humanGrade === 'A' && e.call.intentGrade === 'A');
    const tags = updates.findIndex((e) => e.call.tags.includes('回访'));
    expect(grade).toBeGreaterThanOrEqual(0);
    expect(tags).toBeGreaterThan(grade);
    expect(updates[grade]?.call.tags).toEqual([]);
  });

  it('nothing went to the outbox for calls whose assistant asked for no SMS', async () => {
    expect(await t.db.select().from(outbox)).toEqual([]);
  });
});
