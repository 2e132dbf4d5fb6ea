import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CallEvent } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { memberships, outbox, projectLimits, users } from '../../db/schema';
import { VirtualClock } from '../../engine/clock';
import { seedDemoContent } from '../demo/demo-content';

/**
 * Inbound calls (呼入) through the API, on the simulated carrier with a clock moved by hand: a
 * number bound to an assistant, 模拟来电, refusals, concurrentCallin, hang-ups and isolation.
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
    expect(events.map((e) => e.type)).toEqual(['updated', 'updated']);
    const [grade, tags] = events as Extract<CallEvent, { type: 'updated' }>[];
    expect(grade?.call).toMatchObject({ humanGrade: 'A', intentGrade: 'A' });
    expect(tags?.call.tags).toEqual(['回访']);
  });

  it('nothing went to the outbox for calls whose assistant asked for no SMS', async () => {
    expect(await t.db.select().from(outbox)).toEqual([]);
  });
});
