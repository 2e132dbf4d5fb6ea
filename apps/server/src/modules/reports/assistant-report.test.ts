import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { assistants, callStatsHistogram, callStatsHourly, calls, callTurns } from '../../db/schema';
import { latencyBucket, latencyBucketMs } from './rollup-histograms';

/**
 * 小助手报表 over a small known data set: rollup rows inserted as the rollup worker would write
 * them, re-graded calls in the calls table. The range 2026-11-10 … 2026-11-11 is China time:
 * 2026-11-09T16:00Z to 2026-11-11T16:00Z.
 */

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;
let t: TestApp;
let a: { userId: string; projectId: string };
let b: { userId: string; projectId: string };
let owner: Headers;
let outsider: Headers;
const sales = randomUUID();
const service = randomUUID();

const at = (iso: string) => new Date(iso);
const hourly = (projectId: string, hour: string, values: Partial<typeof callStatsHourly.$inferInsert>) => ({
  projectId,
  hour: at(hour),
  direction: 'outbound' as const,
  ...values,
});

async function gradedCall(
  version: number | null,
  machineGrade: 'A' | 'B' | 'C' | 'D' | null,
  humanGrade: 'A' | 'B' | 'C' | 'D' | null,
  startedAt = '2026-11-10T03:00:00Z',
) {
  await t.db.insert(calls).values({
    id: randomUUID(),
    projectId: a.projectId,
    direction: 'outbound',
    callerNumber: '02160880001',
    calleeNumber: '13800138000',
    status: 'ended',
    startedAt: at(startedAt),
    assistantId: sales,
    assistantName: '销售助手',
    assistantVersion: version,
    machineGrade,
    humanGrade,
    intentGrade: humanGrade ?? machineGrade,
  });
}

beforeAll(async () => {
  t = await createTestApp();
  a = await seedUser(t.db, { email: 'owner@example.com' });
  b = await seedUser(t.db, { email: 'other@example.com' });
  owner = await loginAs(t.app, 'owner@example.com');
  outsider = await loginAs(t.app, 'other@example.com');
  await t.db.insert(assistants).values([
    { id: sales, projectId: a.projectId, name: '销售助手', use: 'outbound', config: {} },
    { id: service, projectId: a.projectId, name: '客服助手', use: 'both', config: {} },
  ]);
  await t.db.insert(callStatsHourly).values([
    // China 2026-11-10 09:00.
    hourly(a.projectId, '2026-11-10T01:00:00Z', {
      assistantId: sales,
      assistantVersion: 1,
      calls: 10,
      answered: 6,
      transferred: 1,
      optOut: 1,
      talkSecondsSum: 120,
      turnsSum: 30,
      gradeA: 2,
      gradeB: 1,
      gradeC: 1,
      gradeD: 2,
    }),
    // A draft test call: in the assistant's total, not a version row.
    hourly(a.projectId, '2026-11-10T02:00:00Z', {
      assistantId: sales,
      calls: 1,
      answered: 1,
      talkSecondsSum: 30,
      turnsSum: 3,
    }),
    // China 2026-11-11 00:00: the second day of the range.
    hourly(a.projectId, '2026-11-10T16:00:00Z', {
      assistantId: sales,
      assistantVersion: 2,
      calls: 4,
      answered: 2,
      optOut: 1,
      talkSecondsSum: 60,
      turnsSum: 10,
      gradeA: 1,
      gradeD: 1,
    }),
    // China 2026-11-09 23:00: the day before the range.
    hourly(a.projectId, '2026-11-09T15:00:00Z', { assistantId: service, assistantVersion: 1, calls: 5 }),
    // No assistant (a flow that never reached one).
    hourly(a.projectId, '2026-11-10T01:00:00Z', { direction: 'inbound', calls: 7, answered: 7 }),
    // Another project, same assistant id and hour.
    hourly(b.projectId, '2026-11-10T01:00:00Z', { assistantId: sales, assistantVersion: 1, calls: 100 }),
  ]);
  const histogram = (projectId: string, hour: string, kind: string, bucket: number, count: number) => ({
    projectId,
    hour: at(hour),
    assistantId: sales,
    assistantVersion: 1,
    kind,
    bucket,
    count,
  });
  await t.db
    .insert(callStatsHistogram)
    .values([
      histogram(a.projectId, '2026-11-10T01:00:00Z', 'hangup_turn', 1, 3),
      histogram(a.projectId, '2026-11-10T01:00:00Z', 'hangup_turn', 30, 2),
      histogram(a.projectId, '2026-11-10T16:00:00Z', 'hangup_turn', 2, 1),
      histogram(a.projectId, '2026-11-10T16:00:00Z', 'hangup_turn', 1, 1),
      histogram(a.projectId, '2026-11-09T15:00:00Z', 'hangup_turn', 5, 9),
      histogram(a.projectId, '2026-11-10T01:00:00Z', 'latency_brain', latencyBucket(1000), 60),
      histogram(a.projectId, '2026-11-10T16:00:00Z', 'latency_brain', latencyBucket(1000), 30),
      histogram(a.projectId, '2026-11-10T16:00:00Z', 'latency_brain', latencyBucket(3000), 10),
      histogram(b.projectId, '2026-11-10T01:00:00Z', 'latency_brain', latencyBucket(9000), 500),
    ]);
  // Version 1: agreed twice on A, A re-graded B, agreed on C; version 2: D re-graded C.
  await gradedCall(1, 'A', 'A');
  await gradedCall(1, 'A', 'A');
  await gradedCall(1, 'A', 'B');
  await gradedCall(1, 'C', 'C');
  await gradedCall(2, 'D', 'C', '2026-11-11T10:00:00Z');
  // Not re-graded, no machine grade to compare, outside the range.
  await gradedCall(1, 'A', null);
  await gradedCall(1, null, 'A');
  await gradedCall(1, 'A', 'D', '2026-11-09T15:59:59Z');
});
afterAll(() => t?.app.close());

const report = async (query: string, headers = owner, projectId = a.projectId) => {
  const res = await t.app.inject({
    method: 'GET',
    url: `/api/project/${projectId}/reports/assistant?${query}`,
    headers,
  });
  return res;
};
const RANGE = 'from=2026-11-10&to=2026-11-11';
const DRILL = { from: '2026-11-09T16:00:00.000Z', to: '2026-11-11T15:59:59.999Z' };

describe('assistant report (小助手报表)', () => {
  it('sums each assistant and published version, with rates over the answered calls and drill-down filters', async () => {
    const res = await report(RANGE);
    expect(res.statusCode).toBe(200);
    const { rows } = res.json().data;
    expect(rows.map((r: { version: number | null }) => r.version)).toEqual([null, 2, 1]);
    expect(rows[0]).toEqual({
      assistantId: sales,
      assistantName: '销售助手',
      version: null,
      calls: 15,
      answered: 9,
      answerRate: 0.6,
      avgTurns: 43 / 9,
      avgTalkSeconds: 210 / 9,
      grades: { A: 3, B: 1, C: 1, D: 3 },
      transferRate: 1 / 9,
      optOutRate: 2 / 9,
      drill: { ...DRILL, assistantId: sales },
    });
    expect(rows[2]).toMatchObject({
      version: 1,
      calls: 10,
      answered: 6,
      avgTurns: 5,
      avgTalkSeconds: 20,
      drill: { ...DRILL, assistantId: sales, assistantVersion: '1' },
    });
  });

  it('trends by China day or hour, every bucket present, a call counting on the day it started', async () => {
    const daily = (await report(`${RANGE}&granularity=day`)).json().data.trend;
    expect(daily.granularity).toBe('day');
    expect(
      daily.points.map((p: { at: string; values: { calls: number; answered: number } }) => [
        p.at,
        p.values.calls,
        p.values.answered,
      ]),
    ).toEqual([
      ['2026-11-09T16:00:00.000Z', 11, 7],
      ['2026-11-10T16:00:00.000Z', 4, 2],
    ]);
    const hourly = (await report(RANGE)).json().data.trend;
    expect(hourly.granularity).toBe('hour');
    expect(hourly.points).toHaveLength(48);
    expect(hourly.points[0].at).toBe('2026-11-09T16:00:00.000Z');
    expect(
      hourly.points.find((p: { at: string }) => p.at === '2026-11-10T16:00:00.000Z').values,
    ).toMatchObject({
      calls: 4,
      answerRate: 0.5,
    });
  });

  it('reads the hang-up funnel and latency percentiles from the histograms of the range', async () => {
    const data = (await report(RANGE)).json().data;
    expect(data.hangupFunnel.map((f: { turn: number; calls: number }) => [f.turn, f.calls])).toEqual([
      [1, 4],
      [2, 1],
      [30, 2],
    ]);
    // A step opens the answered calls the caller hung up after that many turns; the last, or more.
    expect(data.hangupFunnel[0].drill).toMatchObject({
      answered: 'yes',
      hangupBy: 'callee',
      status: 'ended',
      turnsMin: '1',
      turnsMax: '1',
    });
    expect(data.hangupFunnel[2].drill.turnsMin).toBe('30');
    expect(data.hangupFunnel[2].drill.turnsMax).toBeUndefined();
    const brain = data.latency.find((l: { component: string }) => l.component === 'brain');
    expect(brain).toEqual({
      component: 'brain',
      p50Ms: latencyBucketMs(latencyBucket(1000)),
      p95Ms: latencyBucketMs(latencyBucket(3000)),
      samples: 100,
    });
    expect(Math.abs(brain.p95Ms - 3000) / 3000).toBeLessThan(0.1);
    expect(data.latency.find((l: { component: string }) => l.component === 'synthesis')).toEqual({
      component: 'synthesis',
      p50Ms: null,
      p95Ms: null,
      samples: 0,
    });
  });

  it('measures grading agreement per version with a confusion matrix of the re-graded calls', async () => {
    const { grading } = (await report(RANGE)).json().data;
    expect(grading.map((g: { version: number }) => g.version)).toEqual([2, 1]);
    const v1 = grading[1];
    expect(v1).toMatchObject({ assistantId: sales, assistantName: '销售助手', regraded: 4, agreed: 3 });
    expect(v1.matrix.A).toEqual({ A: 2, B: 1, C: 0, D: 0 });
    expect(v1.matrix.C).toEqual({ A: 0, B: 0, C: 1, D: 0 });
    expect(v1.matrix.D).toEqual({ A: 0, B: 0, C: 0, D: 0 });
    expect(v1.drill).toEqual({ ...DRILL, assistantId: sales, humanGraded: 'yes', assistantVersion: '1' });
    expect(grading[0]).toMatchObject({ version: 2, regraded: 1, agreed: 0 });
    expect(grading[0].matrix.D.C).toBe(1);
  });

  it('narrows to one assistant, and answers an empty range with zeros rather than nothing', async () => {
    const other = (await report(`${RANGE}&assistantId=${service}`)).json().data;
    expect(other.rows).toEqual([]);
    expect(other.grading).toEqual([]);
    expect(other.hangupFunnel).toEqual([]);
    const empty = (await report('from=2026-01-01&to=2026-01-01')).json().data;
    expect(empty.rows).toEqual([]);
    expect(empty.trend.points).toHaveLength(24);
    expect(empty.trend.points.every((p: { values: { calls: number } }) => p.values.calls === 0)).toBe(true);
    expect(
      empty.latency.every((l: { p50Ms: null; samples: number }) => l.p50Ms === null && l.samples === 0),
    ).toBe(true);
  });

  it("refuses a reversed range, and another project's member sees nothing of it", async () => {
    const reversed = await report('from=2026-11-11&to=2026-11-10');
    expect(reversed.statusCode).toBe(400);
    expect(reversed.json().message).toContain('结束日期不能早于开始日期');
    expect((await report(RANGE, outsider)).statusCode).toBe(403);
    // The other project's own report holds only its own rows.
    const theirs = (await report(RANGE, outsider, b.projectId)).json().data;
    expect(theirs.rows[0]).toMatchObject({ calls: 100, assistantName: '' });
    expect(theirs.grading).toEqual([]);
    expect(theirs.latency.find((l: { component: string }) => l.component === 'brain').samples).toBe(500);
  });

  it('exports the table as CSV and as Excel', async () => {
    const csv = await t.app.inject({
      method: 'GET',
      url: `/api/project/${a.projectId}/reports/assistant/export?${RANGE}&format=csv`,
      headers: owner,
    });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.headers['content-disposition']).toContain('assistant-report-2026-11-10_2026-11-11.csv');
    const lines = csv.body.replace('\uFEFF', '').trim().split('\r\n');
    expect(lines[0]).toMatch(/^小助手,版本,通话数,接通数,接通率\(%\)/);
    expect(lines[1]).toBe('销售助手,全部版本,15,9,60,4.8,23.3,3,1,1,3,11.1,22.2');
    expect(lines).toHaveLength(4);
    const xlsx = await t.app.inject({
      method: 'GET',
      url: `/api/project/${a.projectId}/reports/assistant/export?${RANGE}`,
      headers: owner,
    });
    expect(xlsx.statusCode).toBe(200);
    expect(xlsx.rawPayload.subarray(0, 2).toString()).toBe('PK');
    const foreign = await t.app.inject({
      method: 'GET',
      url: `/api/project/${a.projectId}/reports/assistant/export?${RANGE}`,
      headers: outsider,
    });
    expect(foreign.statusCode).toBe(403);
  });
});

describe('assistant report narrowed to a number or a task', () => {
  const LINE = '02160880009';
  const task = randomUUID();
  const DAY = 'from=2026-11-12&to=2026-11-12';
  const DAY_DRILL = { from: '2026-11-11T16:00:00.000Z', to: '2026-11-12T15:59:59.999Z' };

  beforeAll(async () => {
    // China 2026-11-12 10:00: one task's calls on LINE, another line's, and no task.
    await t.db.insert(callStatsHourly).values([
      hourly(a.projectId, '2026-11-12T02:00:00Z', {
        assistantId: sales,
        assistantVersion: 1,
        lineNumber: LINE,
        taskId: task,
        calls: 3,
        answered: 2,
      }),
      hourly(a.projectId, '2026-11-12T02:00:00Z', {
        assistantId: sales,
        assistantVersion: 1,
        lineNumber: '02160880001',
        calls: 5,
        answered: 1,
      }),
    ]);
    // The histogram rollup has no number or task: these calls are what the narrowed funnel reads.
    const onLine = randomUUID();
    const elsewhere = randomUUID();
    const base = {
      projectId: a.projectId,
      direction: 'outbound' as const,
      calleeNumber: '13800138000',
      status: 'ended' as const,
      startedAt: at('2026-11-12T02:10:00Z'),
      answeredAt: at('2026-11-12T02:10:05Z'),
      hangupBy: 'callee' as const,
      assistantId: sales,
      assistantName: '销售助手',
      assistantVersion: 1,
    };
    await t.db.insert(calls).values([
      {
        ...base,
        id: onLine,
        callerNumber: LINE,
        taskId: task,
        turnCount: 2,
        machineGrade: 'A',
        humanGrade: 'B',
      },
      {
        ...base,
        id: elsewhere,
        callerNumber: '02160880001',
        turnCount: 7,
        machineGrade: 'C',
        humanGrade: 'C',
      },
    ]);
    const turn = (callId: string, brainMs: number) => ({
      callId,
      index: 1,
      speaker: 'assistant' as const,
      text: '好的',
      startMs: 0,
      endMs: 900,
      latency: { recognitionMs: 100, retrievalMs: 10, brainMs, firstTokenMs: 1, synthesisMs: 50 },
    });
    await t.db.insert(callTurns).values([turn(onLine, 500), turn(elsewhere, 4000)]);
  });

  for (const filter of [`lineNumber=${LINE}`, `taskId=${task}`]) {
    it(`follows ${filter.split('=')[0]} in every part, drills included`, async () => {
      const res = await report(`${DAY}&${filter}`);
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data;
      const narrowed = filter.startsWith('lineNumber') ? { lineNumber: LINE } : { taskId: task };
      expect(data.rows.map((r: { version: number | null; calls: number }) => [r.version, r.calls])).toEqual([
        [null, 3],
        [1, 3],
      ]);
      expect(data.rows[0].drill).toEqual({ ...DAY_DRILL, ...narrowed, assistantId: sales });
      expect(
        data.trend.points.reduce((n: number, p: { values: { calls: number } }) => n + p.values.calls, 0),
      ).toBe(3);
      expect(data.hangupFunnel.map((f: { turn: number; calls: number }) => [f.turn, f.calls])).toEqual([
        [2, 1],
      ]);
      const listed = await t.app.inject({
        url: `/api/project/${a.projectId}/calls?${new URLSearchParams(data.hangupFunnel[0].drill)}`,
        headers: owner,
      });
      expect(listed.json().data.total).toBe(1);
      const brain = data.latency.find((l: { component: string }) => l.component === 'brain');
      expect(brain).toMatchObject({ samples: 1, p50Ms: latencyBucketMs(latencyBucket(500)) });
      expect(data.grading).toHaveLength(1);
      expect(data.grading[0]).toMatchObject({ version: 1, regraded: 1, agreed: 0 });
      expect(data.grading[0].drill).toMatchObject(narrowed);
    });
  }

  it('without them counts the whole day', async () => {
    const data = (await report(DAY)).json().data;
    expect(data.rows[0].calls).toBe(8);
    // Straight from the histogram rollup, which nobody wrote for these inserted calls.
    expect(data.grading[0]).toMatchObject({ regraded: 2, agreed: 1 });
  });

  it('refuses a flow, naming the field', async () => {
    const res = await report(`${DAY}&flowId=${randomUUID()}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain('字段 flowId');
    const file = await t.app.inject({
      method: 'GET',
      url: `/api/project/${a.projectId}/reports/assistant/export?${DAY}&flowId=${randomUUID()}`,
      headers: owner,
    });
    expect(file.statusCode).toBe(400);
  });
});
