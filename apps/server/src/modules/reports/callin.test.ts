import { randomUUID } from 'node:crypto';
import type { CallinReport } from '@callpilot/contracts';
import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { assistants, callFlows, callStatsDirty, callStatsHourly, calls } from '../../db/schema';
import { CallEventHub } from '../calls/call-events';
import { CallRepository } from '../calls/call-repository';
import { markAllHours, markMissingHours, processDirty, RollupWorker } from './rollup-worker';

/** 呼入统计 over a small known set of calls inserted directly, and the rollups behind it. */

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;
let t: TestApp;
let a: { userId: string; projectId: string };
let b: { userId: string; projectId: string };
let owner: Headers;
let outsider: Headers;
const assistantId = randomUUID();
const flowId = randomUUID();

/** A China-time instant: '2026-11-02 09:00:00' → Date. */
const cn = (text: string) => new Date(`${text.replace(' ', 'T')}+08:00`);
const plus = (at: Date, seconds: number) => new Date(at.getTime() + seconds * 1000);
const step = (nodeId: string, nodeName: string, nodeType = 'play') => ({
  nodeId,
  nodeType,
  nodeName,
  atMs: 0,
  durationMs: 0,
  exit: null,
  input: null,
  output: {},
});

type NewCall = typeof calls.$inferInsert;
function call(projectId: string, startedAt: Date, extra: Partial<NewCall> = {}): NewCall {
  return {
    id: randomUUID(),
    projectId,
    direction: 'inbound',
    callerNumber: '13800000000',
    calleeNumber: '4001',
    status: 'ended',
    startedAt,
    endedAt: plus(startedAt, 90),
    endReason: 'completed',
    hangupBy: 'callee',
    ...extra,
  };
}
function answeredCall(projectId: string, startedAt: Date, waitSeconds: number, extra: Partial<NewCall> = {}) {
  return call(projectId, startedAt, { answeredAt: plus(startedAt, waitSeconds), ...extra });
}

beforeAll(async () => {
  t = await createTestApp();
  a = await seedUser(t.db, { email: 'owner@example.com' });
  b = await seedUser(t.db, { email: 'other@example.com' });
  owner = await loginAs(t.app, 'owner@example.com');
  outsider = await loginAs(t.app, 'other@example.com');
  await t.db
    .insert(assistants)
    .values({ id: assistantId, projectId: a.projectId, name: '客服小助手', use: 'inbound', config: {} });
  await t.db.insert(callFlows).values({ id: flowId, projectId: a.projectId, name: '客服热线', draft: {} });
  const p = a.projectId;
  await t.db.insert(calls).values([
    // Answered in 2 s by the assistant.
    answeredCall(p, cn('2026-11-02 09:00:00'), 2, { assistantId, turnCount: 4, talkSeconds: 60 }),
    // The flow answered in 5 s; the caller left in the menu before any assistant talked.
    answeredCall(p, cn('2026-11-02 09:10:00'), 5, {
      flowId,
      turnCount: 1,
      talkSeconds: 8,
      flowPath: [step('start', '开始'), step('menu', '主菜单')],
    }),
    // The flow answered in 1 s, played the bill and hung up itself: served, not abandoned.
    answeredCall(p, cn('2026-11-02 09:20:00'), 1, {
      flowId,
      turnCount: 2,
      talkSeconds: 15,
      hangupBy: 'assistant',
      flowPath: [step('start', '开始'), step('menu', '主菜单'), step('billing', '账单')],
    }),
    // The last second of Monday, China time: hung up while ringing.
    call(p, cn('2026-11-02 23:59:59'), { endReason: 'callee_hangup' }),
    // The first second of Tuesday, China time: refused over the concurrency limit.
    call(p, cn('2026-11-03 00:00:00'), {
      calleeNumber: '4002',
      endReason: 'callin_limit',
      hangupBy: 'system',
    }),
    // Through the flow to the assistant after 12 s, then transferred. A flow call keeps no
    // assistant_id: its path's assistant node tells that an assistant talked.
    answeredCall(p, cn('2026-11-03 10:00:00'), 12, {
      calleeNumber: '4002',
      flowId,
      turnCount: 3,
      talkSeconds: 30,
      transferredAt: cn('2026-11-03 10:00:40'),
      transferNumber: '13900000000',
      endReason: 'transferred',
      flowPath: [step('start', '开始'), step('menu', '主菜单'), step('agent', '转小助手', 'assistant')],
    }),
    // The previous period (Sat-Sun before).
    answeredCall(p, cn('2026-11-01 12:00:00'), 1, { assistantId, turnCount: 2, talkSeconds: 20 }),
    // Not counted: after the range, outbound, still live.
    answeredCall(p, cn('2026-11-04 00:00:00'), 1, { assistantId, turnCount: 2, talkSeconds: 20 }),
    call(p, cn('2026-11-02 11:00:00'), {
      direction: 'outbound',
      callerNumber: '4001',
      calleeNumber: '13800000001',
    }),
    call(p, cn('2026-11-02 12:00:00'), {
      status: 'in_progress',
      endedAt: null,
      endReason: null,
      hangupBy: null,
    }),
    // Another project's.
    answeredCall(b.projectId, cn('2026-11-02 09:00:00'), 1, { turnCount: 2, talkSeconds: 20 }),
  ]);
  // Inserted around the repository, like the demo history: the start-up backfill marks them.
  await markMissingHours(t.db);
  await processDirty(t.db);
});
afterAll(() => t?.app.close());

async function report(query: string, headers = owner): Promise<CallinReport> {
  const res = await t.app.inject({ url: `/api/project/${a.projectId}/reports/callin?${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

async function listTotal(drill: Record<string, string>): Promise<number> {
  const query = new URLSearchParams(drill).toString();
  const res = await t.app.inject({ url: `/api/project/${a.projectId}/calls?${query}`, headers: owner });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.total;
}

describe('inbound report', () => {
  it('counts each figure on the known calls, against the previous period', async () => {
    const r = await report('from=2026-11-02&to=2026-11-03');
    expect(r.range).toEqual({
      from: '2026-11-02',
      to: '2026-11-03',
      previousFrom: '2026-10-31',
      previousTo: '2026-11-01',
    });
    const values = Object.fromEntries(Object.entries(r.figures).map(([k, f]) => [k, f.value]));
    expect(values).toEqual({
      offered: 6,
      answered: 4,
      assistantAnswered: 2,
      transferred: 1,
      abandonedRinging: 1,
      abandonedFlow: 1,
      overLimit: 1,
      answerRate: 4 / 6,
      avgWaitSeconds: (2 + 5 + 12 + 1) / 4,
      maxWaitSeconds: 12,
      avgTalkSeconds: (60 + 8 + 30 + 15) / 4,
      maxTalkSeconds: 60,
    });
    expect(r.figures.offered.previous).toBe(1);
    expect(r.figures.answerRate.previous).toBe(1);
    expect(r.figures.overLimit.previous).toBe(0);
    expect(r.answeredWithin.map((b) => b.count)).toEqual([2, 1, 0, 1, 0]);
  });

  it('puts 23:59:59 and 00:00:00 China time on their own days, zero-filled', async () => {
    const daily = await report('from=2026-11-02&to=2026-11-04&granularity=day');
    expect(daily.trend.granularity).toBe('day');
    expect(daily.trend.points.map((p) => [p.at, p.values.offered])).toEqual([
      ['2026-11-01T16:00:00.000Z', 4],
      ['2026-11-02T16:00:00.000Z', 2],
      ['2026-11-03T16:00:00.000Z', 1],
    ]);
    const hourly = await report('from=2026-11-02&to=2026-11-03');
    expect(hourly.trend.granularity).toBe('hour');
    expect(hourly.trend.points).toHaveLength(48);
    const at = (iso: string) => hourly.trend.points.find((p) => p.at === iso)?.values.offered;
    expect(at('2026-11-02T15:00:00.000Z')).toBe(1);
    expect(at('2026-11-02T16:00:00.000Z')).toBe(1);
    // 2026-11-02 is a Monday.
    const cell = (weekday: number, hour: number) =>
      hourly.heatmap.find((c) => c.weekday === weekday && c.hour === hour)?.value;
    expect(hourly.heatmap).toHaveLength(168);
    expect(cell(1, 9)).toBe(3);
    expect(cell(1, 23)).toBe(1);
    expect(cell(2, 0)).toBe(1);
    expect(cell(2, 10)).toBe(1);
  });

  it('breaks down by number and flow, and funnels the chosen flow', async () => {
    const r = await report('from=2026-11-02&to=2026-11-03');
    expect(r.byNumber.map((row) => [row.key, row.values.offered, row.values.answered])).toEqual([
      ['4001', 4, 3],
      ['4002', 2, 1],
    ]);
    // The calls no flow answered have their own labelled row, last, so the table adds up.
    expect(r.byFlow.map((row) => [row.label, row.values.offered, row.values.abandonedFlow])).toEqual([
      ['客服热线', 3, 1],
      ['无通话流程', 3, 0],
    ]);
    expect(r.byFlow.reduce((n, row) => n + (row.values.offered ?? 0), 0)).toBe(r.figures.offered.value);
    expect(r.byFlow[1]?.drill).toMatchObject({ flowId: 'none', direction: 'inbound' });
    expect(r.flowFunnel).toBeNull();
    const flow = await report(`from=2026-11-02&to=2026-11-03&flowId=${flowId}`);
    expect(flow.figures.offered.value).toBe(3);
    expect(flow.figures.abandonedFlow.value).toBe(1);
    expect(flow.flowFunnel?.map(({ drill: _, ...step }) => step)).toEqual([
      { nodeId: 'start', label: '开始', calls: 3 },
      { nodeId: 'menu', label: '主菜单', calls: 3 },
      { nodeId: 'agent', label: '转小助手', calls: 1 },
      { nodeId: 'billing', label: '账单', calls: 1 },
    ]);
    // Each step opens the calls that passed it.
    for (const step of flow.flowFunnel ?? [])
      expect(await listTotal(step.drill), step.nodeId).toBe(step.calls);
    const line = await report('from=2026-11-02&to=2026-11-03&lineNumber=4002');
    expect(line.figures.offered.value).toBe(2);
    expect(line.figures.overLimit.value).toBe(1);
  });

  it('drills every count to the list filters that reproduce it', async () => {
    const r = await report('from=2026-11-02&to=2026-11-03');
    for (const [key, figure] of Object.entries(r.figures)) {
      if (!figure.drill || key.startsWith('avg') || key === 'answerRate') continue;
      const expected =
        key === 'maxWaitSeconds' ? 1 : key === 'maxTalkSeconds' ? r.figures.answered.value : figure.value;
      expect(await listTotal(figure.drill), key).toBe(expected);
    }
    for (const bucket of r.answeredWithin)
      expect(await listTotal(bucket.drill ?? {}), bucket.label).toBe(bucket.count);
    for (const row of [...r.byNumber, ...r.byFlow].filter((row) => row.drill))
      expect(await listTotal(row.drill ?? {}), row.key).toBe(row.values.offered);
    const chosen = await report(`from=2026-11-02&to=2026-11-03&flowId=${flowId}`);
    expect(chosen.byFlow.map((row) => row.key)).toEqual([flowId]);
  });

  it("drills a previous figure to the previous period's calls, never this range's", async () => {
    const r = await report('from=2026-11-02&to=2026-11-03');
    const previousRange = { from: cn('2026-10-31 00:00:00').toISOString(), to: '2026-11-01T15:59:59.999Z' };
    for (const [key, figure] of Object.entries(r.figures)) {
      expect(figure.drill, key).toMatchObject({
        from: '2026-11-01T16:00:00.000Z',
        to: '2026-11-03T15:59:59.999Z',
      });
      expect(figure.previousDrill, key).toMatchObject(previousRange);
      if (key.startsWith('avg') || key === 'answerRate') continue;
      const expected = key.startsWith('max') ? r.figures.answered.previous : figure.previous;
      expect(await listTotal(figure.previousDrill ?? {}), key).toBe(expected);
    }
    // The previous period's longest wait (1 s) is its own, not this range's 12 s.
    expect(r.figures.maxWaitSeconds.previousDrill?.waitMin).toBe('1');
  });

  it('answers an empty range with zeros', async () => {
    const r = await report('from=2025-01-01&to=2025-01-01');
    expect(r.figures.offered).toMatchObject({ value: 0, previous: 0 });
    expect(r.figures.answerRate.value).toBe(0);
    expect(r.trend.points).toHaveLength(24);
    expect(r.trend.points.every((p) => p.values.offered === 0)).toBe(true);
    expect(r.byNumber).toEqual([]);
  });

  it('refuses a reversed range and hides another project', async () => {
    const bad = await t.app.inject({
      url: `/api/project/${a.projectId}/reports/callin?from=2026-11-03&to=2026-11-02`,
      headers: owner,
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('结束日期不能早于开始日期');
    const other = await t.app.inject({
      url: `/api/project/${a.projectId}/reports/callin?from=2026-11-02&to=2026-11-03`,
      headers: outsider,
    });
    expect([403, 404]).toContain(other.statusCode);
    const theirs = await t.app.inject({
      url: `/api/project/${b.projectId}/reports/callin?from=2026-11-02&to=2026-11-03`,
      headers: outsider,
    });
    expect(theirs.json().data.figures.offered.value).toBe(1);
  });

  it('exports CSV and XLSX with Chinese headers', async () => {
    const csv = await t.app.inject({
      url: `/api/project/${a.projectId}/reports/callin/export?from=2026-11-02&to=2026-11-03&format=csv`,
      headers: owner,
    });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.body).toContain('来电量');
    expect(csv.body).toContain('按号码');
    const xlsx = await t.app.inject({
      url: `/api/project/${a.projectId}/reports/callin/export?from=2026-11-02&to=2026-11-03&format=xlsx`,
      headers: owner,
    });
    expect(xlsx.statusCode).toBe(200);
    expect(xlsx.rawPayload.subarray(0, 2).toString()).toBe('PK');
    const theirs = await t.app.inject({
      url: `/api/project/${a.projectId}/reports/callin/export?from=2026-11-02&to=2026-11-03`,
      headers: outsider,
    });
    expect([403, 404]).toContain(theirs.statusCode);
  });
});

describe('call list drill-down filters', () => {
  const base = { from: cn('2026-11-02 00:00:00').toISOString(), to: cn('2026-11-03 23:59:59').toISOString() };

  it('match the project number by direction and the yes/no facts', async () => {
    // 4001 is the number dialled inbound and the caller number of the outbound call.
    expect(await listTotal({ ...base, lineNumber: '4001' })).toBe(6);
    expect(await listTotal({ ...base, lineNumber: '4001', direction: 'outbound' })).toBe(1);
    expect(await listTotal({ ...base, flowId })).toBe(3);
    expect(await listTotal({ ...base, transferred: 'no', answered: 'yes' })).toBe(3);
    expect(await listTotal({ ...base, hangupBy: 'assistant' })).toBe(1);
    expect(await listTotal({ ...base, humanGraded: 'yes' })).toBe(0);
    expect(await listTotal({ ...base, waitMin: '5', waitMax: '12' })).toBe(2);
    expect(await listTotal({ ...base, flowId: 'none', direction: 'inbound' })).toBe(4);
    expect(await listTotal({ ...base, flowId, flowNodeId: 'billing' })).toBe(1);
    expect(await listTotal({ ...base, flowNodeId: 'nowhere' })).toBe(0);
    expect(await listTotal({ ...base, turnsMin: '2', turnsMax: '3' })).toBe(2);
  });

  it('refuse values they do not know, naming the field', async () => {
    for (const [query, message] of [
      ['answered=maybe', '是否接通须为 yes 或 no'],
      ['waitMin=9&waitMax=3', '最长等待时长不能小于最短等待时长'],
      ['turnsMin=4&turnsMax=1', '最多对话轮次不能小于最少对话轮次'],
      ['lineNumber=abc', '线路号码只能包含数字'],
    ]) {
      const res = await t.app.inject({ url: `/api/project/${a.projectId}/calls?${query}`, headers: owner });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().message, query).toContain(message);
    }
  });
});

describe('rollups', () => {
  const snapshot = () =>
    t.db
      .select()
      .from(callStatsHourly)
      .where(eq(callStatsHourly.projectId, a.projectId))
      .orderBy(asc(callStatsHourly.hour), asc(callStatsHourly.lineNumber), asc(callStatsHourly.flowId));

  it('rebuilt from scratch equal the live ones', async () => {
    const live = await snapshot();
    expect(live.length).toBeGreaterThan(0);
    await t.db.delete(callStatsHourly).where(eq(callStatsHourly.projectId, a.projectId));
    await markAllHours(t.db, a.projectId);
    await processDirty(t.db);
    expect(await snapshot()).toEqual(live);
  });

  it('are marked by the repository when a call ends, and recomputed', async () => {
    let woken = 0;
    const repository = new CallRepository(t.db, new CallEventHub(), {
      owner: 'rollup-test',
      singleProcess: true,
      onStatsDirty: () => woken++,
    });
    const startedAt = cn('2026-11-05 08:30:00');
    const id = randomUUID();
    await repository.create({
      id,
      projectId: a.projectId,
      direction: 'inbound',
      callerNumber: '13800000000',
      calleeNumber: '4001',
      assistantId,
      assistantName: '客服小助手',
      assistantVersion: 1,
      startedAt,
    });
    // Live: no mark, not in the report.
    expect(await t.db.select().from(callStatsDirty).where(eq(callStatsDirty.projectId, a.projectId))).toEqual(
      [],
    );
    await repository.answered(a.projectId, id, plus(startedAt, 3));
    await repository.end(a.projectId, id, {
      endReason: 'completed',
      hangupBy: 'callee',
      endedAt: plus(startedAt, 33),
    });
    expect(woken).toBe(1);
    const marks = await t.db.select().from(callStatsDirty).where(eq(callStatsDirty.projectId, a.projectId));
    expect(marks.map((m) => m.hour.toISOString())).toEqual(['2026-11-05T00:00:00.000Z']);
    expect(await processDirty(t.db)).toBe(1);
    const r = await report('from=2026-11-05&to=2026-11-05');
    expect(r.figures.answered.value).toBe(1);
    expect(r.figures.avgTalkSeconds.value).toBe(30);
    await t.db.delete(calls).where(eq(calls.id, id));
    await markAllHours(t.db, a.projectId);
    await processDirty(t.db);
  });

  it('are recomputed by the worker when the repository wakes it', async () => {
    const worker = new RollupWorker(t.db, { debounceMs: 0, pollMs: 60_000 });
    const repository = new CallRepository(t.db, new CallEventHub(), {
      owner: 'rollup-worker-test',
      singleProcess: true,
      onStatsDirty: () => worker.wake(),
    });
    await worker.start();
    try {
      const startedAt = cn('2026-11-06 08:30:00');
      const id = randomUUID();
      await repository.create({
        id,
        projectId: a.projectId,
        direction: 'inbound',
        callerNumber: '13800000000',
        calleeNumber: '4003',
        assistantId: null,
        assistantName: '',
        assistantVersion: null,
        startedAt,
      });
      await repository.end(a.projectId, id, {
        endReason: 'no_answer',
        hangupBy: 'system',
        endedAt: plus(startedAt, 20),
      });
      await expect
        .poll(async () => (await report('from=2026-11-06&to=2026-11-06')).figures.abandonedRinging.value, {
          timeout: 5000,
        })
        .toBe(1);
      await t.db.delete(calls).where(eq(calls.id, id));
      await markAllHours(t.db, a.projectId);
    } finally {
      await worker.stop();
    }
    await processDirty(t.db);
  });
});
