import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { callStatsHourly, projectNumbers } from '../../db/schema';
import { numberWarning } from './numbers-report';

/**
 * 外显号码健康度 over hourly rollup rows. Range 2026-11-10 … 2026-11-11 China time; its baseline
 * is the 28 China days before, 2026-10-13 … 2026-11-09 (from 2026-10-12T16:00Z).
 */

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;
let t: TestApp;
let a: { userId: string; projectId: string };
let b: { userId: string; projectId: string };
let owner: Headers;
let outsider: Headers;

const row = (
  projectId: string,
  lineNumber: string,
  hour: string,
  values: Partial<typeof callStatsHourly.$inferInsert>,
) => ({ projectId, lineNumber, hour: new Date(hour), direction: 'outbound' as const, ...values });
const BASELINE_HOUR = '2026-11-01T02:00:00Z';
const DAY_1 = '2026-11-10T01:00:00Z';
const DAY_2 = '2026-11-10T16:00:00Z';

beforeAll(async () => {
  t = await createTestApp();
  a = await seedUser(t.db, { email: 'owner@example.com' });
  b = await seedUser(t.db, { email: 'other@example.com' });
  owner = await loginAs(t.app, 'owner@example.com');
  outsider = await loginAs(t.app, 'other@example.com');
  const p = a.projectId;
  await t.db.insert(callStatsHourly).values([
    // Marked: 60% answered before, 25% now.
    row(p, '02160880001', BASELINE_HOUR, { calls: 100, answered: 60 }),
    row(p, '02160880001', DAY_1, { calls: 40, answered: 10, shortAnswered: 6, rejected: 8 }),
    row(p, '02160880001', DAY_2, { calls: 20, answered: 5, rejected: 2 }),
    // 40% against 60%: a fall, but not under 60% of its baseline (36%).
    row(p, '02160880002', BASELINE_HOUR, { calls: 100, answered: 60 }),
    row(p, '02160880002', DAY_1, { calls: 60, answered: 24 }),
    // A day before the baseline window: not part of it.
    row(p, '02160880002', '2026-10-12T15:00:00Z', { calls: 1000, answered: 0 }),
    // Too little history to judge.
    row(p, '02160880003', BASELINE_HOUR, { calls: 20, answered: 20 }),
    row(p, '02160880003', DAY_1, { calls: 60, answered: 5 }),
    // New number, no history.
    row(p, '02160880004', DAY_1, { calls: 10 }),
    // Used only before the range; inbound numbers; another project's use of the same number.
    row(p, '02160880005', BASELINE_HOUR, { calls: 10, answered: 1 }),
    { ...row(p, '4008001234', DAY_1, { calls: 30, answered: 30 }), direction: 'inbound' as const },
    row(b.projectId, '02160880001', DAY_1, { calls: 500, answered: 500 }),
  ]);
  // The marked number is one of the project's and already rests; the others were removed since.
  await t.db
    .insert(projectNumbers)
    .values({ projectId: p, number: '02160880001', restingSince: new Date('2026-11-11T02:00:00Z') });
});
afterAll(() => t?.app.close());

const RANGE = 'from=2026-11-10&to=2026-11-11';
const get = (path: string, headers = owner, projectId = a.projectId) =>
  t.app.inject({ method: 'GET', url: `/api/project/${projectId}/reports/${path}`, headers });

describe('number health (外显号码健康度)', () => {
  it('warns only with enough calls on both sides and a rate under 60% of the baseline', () => {
    const baseline = { calls: 100, answered: 50 };
    expect(numberWarning({ calls: 50, answered: 14 }, baseline)).toBe(true);
    expect(numberWarning({ calls: 50, answered: 15 }, baseline)).toBe(false);
    expect(numberWarning({ calls: 49, answered: 0 }, baseline)).toBe(false);
    expect(numberWarning({ calls: 50, answered: 0 }, { calls: 49, answered: 49 })).toBe(false);
    expect(numberWarning({ calls: 50, answered: 0 }, { calls: 50, answered: 0 })).toBe(false);
  });

  it('reports each outbound caller number against its own 28-day baseline, warnings first', async () => {
    const res = await get(`numbers?${RANGE}`);
    expect(res.statusCode).toBe(200);
    const { rows } = res.json().data;
    expect(rows.map((r: { number: string }) => r.number)).toEqual([
      '02160880001',
      '02160880002',
      '02160880003',
      '02160880004',
    ]);
    expect(rows[0]).toEqual({
      number: '02160880001',
      calls: 60,
      answered: 15,
      answerRate: 0.25,
      baselineAnswerRate: 0.6,
      shortAnsweredShare: 0.4,
      rejected: 10,
      warning: true,
      projectNumber: true,
      restingSince: '2026-11-11T02:00:00.000Z',
      trend: [
        { at: '2026-11-09T16:00:00.000Z', answerRate: 0.25, calls: 40 },
        { at: '2026-11-10T16:00:00.000Z', answerRate: 0.25, calls: 20 },
      ],
      drill: {
        from: '2026-11-09T16:00:00.000Z',
        to: '2026-11-11T15:59:59.999Z',
        direction: 'outbound',
        lineNumber: '02160880001',
      },
    });
    expect(rows[1]).toMatchObject({
      answerRate: 0.4,
      baselineAnswerRate: 0.6,
      warning: false,
      projectNumber: false,
      restingSince: null,
    });
    expect(rows[2]).toMatchObject({ baselineAnswerRate: 1, warning: false });
    expect(rows[3]).toMatchObject({
      answerRate: 0,
      baselineAnswerRate: null,
      shortAnsweredShare: 0,
      warning: false,
    });
    expect(rows[3].trend[1]).toEqual({ at: '2026-11-10T16:00:00.000Z', answerRate: null, calls: 0 });
  });

  it('answers an empty range with no rows', async () => {
    expect((await get('numbers?from=2026-01-01&to=2026-01-31')).json().data).toEqual({ rows: [] });
  });

  it("keeps a project's numbers to its members", async () => {
    expect((await get(`numbers?${RANGE}`, outsider)).statusCode).toBe(403);
    expect((await get(`numbers/export?${RANGE}`, outsider)).statusCode).toBe(403);
    const theirs = (await get(`numbers?${RANGE}`, outsider, b.projectId)).json().data.rows;
    expect(theirs).toHaveLength(1);
    expect(theirs[0]).toMatchObject({ number: '02160880001', calls: 500, baselineAnswerRate: null });
  });

  it('exports CSV with the advice on warned numbers, and Excel', async () => {
    const csv = await get(`numbers/export?${RANGE}&format=csv`);
    expect(csv.statusCode).toBe(200);
    const lines = csv.body.replace('\uFEFF', '').trim().split('\r\n');
    expect(lines[0]).toBe(
      '外显号码,通话数,接通数,接通率(%),近 28 天基准接通率(%),10 秒内挂断占比(%),拒接/忙线,预警,状态',
    );
    expect(lines[1]).toBe('02160880001,60,15,25,60,40,10,接通率骤降，建议暂停使用该号码（休息）,休息中');
    expect(lines[4]).toBe('02160880004,10,0,0,,0,0,,');
    const xlsx = await get(`numbers/export?${RANGE}&format=xlsx`);
    expect(xlsx.headers['content-type']).toContain('spreadsheetml');
    expect(xlsx.rawPayload.subarray(0, 2).toString()).toBe('PK');
  });
});
