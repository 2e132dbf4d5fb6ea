import { randomUUID } from 'node:crypto';
import type { DashboardSummary } from '@callpilot/contracts';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { calls, projectLimits, projectNumbers, sipTrunks, taskContacts } from '../../db/schema';
import { VirtualClock } from '../../engine/clock';
import { insertContacts, insertTask, testSettings } from '../../engine/dialer/test-support';
import type { TrunkControl } from '../../runtime/trunk-control';
import { markAllHours, processDirty } from './rollup-worker';

/**
 * 首页 over a small known set of calls. "Now" is Tuesday 2026-11-24 10:30 China time, so today
 * is 11-24 from 00:00, yesterday's same time is 11-23 00:00–10:30 and the 14-day trend starts on
 * 11-11.
 */

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;
const NOW = '2026-11-24T10:30:00+08:00';
let t: TestApp;
let a: { userId: string; projectId: string };
let b: { userId: string; projectId: string };
let owner: Headers;
let outsider: Headers;
let runningTask: string;
let pausedTask: string;

const cn = (text: string) => new Date(`${text.replace(' ', 'T')}+08:00`);
const plus = (at: Date, seconds: number) => new Date(at.getTime() + seconds * 1000);

type NewCall = typeof calls.$inferInsert;
function call(projectId: string, startedAt: string, extra: Partial<NewCall> = {}): NewCall {
  const at = cn(startedAt);
  return {
    id: randomUUID(),
    projectId,
    direction: 'outbound',
    callerNumber: '02160880001',
    calleeNumber: '13800000000',
    status: 'ended',
    startedAt: at,
    endedAt: plus(at, 40),
    endReason: 'no_answer',
    hangupBy: 'system',
    ...extra,
  };
}
const answered = (projectId: string, startedAt: string, talkSeconds: number, extra: Partial<NewCall> = {}) =>
  call(projectId, startedAt, {
    answeredAt: plus(cn(startedAt), 5),
    talkSeconds,
    endReason: 'completed',
    hangupBy: 'callee',
    ...extra,
  });

beforeAll(async () => {
  // SIP "running" with no live view: a trunk's status is what its columns last recorded.
  const trunks: TrunkControl = {
    unavailable: null,
    status: () => null,
    changed: () => undefined,
    testCall: async () => ({ ok: false, message: '' }),
  };
  t = await createTestApp({ clock: new VirtualClock({ startAt: Date.parse(NOW) }), trunks });
  a = await seedUser(t.db, { email: 'owner@example.com' });
  b = await seedUser(t.db, { email: 'other@example.com' });
  owner = await loginAs(t.app, 'owner@example.com');
  outsider = await loginAs(t.app, 'other@example.com');
  const p = a.projectId;
  await t.db.insert(calls).values([
    // Today.
    call(p, '2026-11-24 00:00:00'),
    answered(p, '2026-11-24 09:10:00', 120, { intentGrade: 'A' }),
    call(p, '2026-11-24 10:10:00'),
    answered(p, '2026-11-24 10:20:00', 60, {
      direction: 'inbound',
      callerNumber: '13900000000',
      calleeNumber: '4001',
      intentGrade: 'C',
      transferredAt: cn('2026-11-24 10:20:30'),
      endReason: 'transferred',
    }),
    // Live now: in no figure, but one call up.
    call(p, '2026-11-24 10:25:00', { status: 'in_progress', endedAt: null, endReason: null, hangupBy: null }),
    // Yesterday: two before 10:30 (one in the 10 o'clock hour), two after.
    answered(p, '2026-11-23 09:00:00', 30),
    call(p, '2026-11-23 10:29:00'),
    answered(p, '2026-11-23 10:31:00', 30),
    call(p, '2026-11-23 23:59:59'),
    // A week ago at 10:00: in the 7-day same-time average, not in 近 7 日 (from 11-18).
    answered(p, '2026-11-17 10:00:00', 30),
    // First day of the trend; one before it.
    call(p, '2026-11-11 08:00:00'),
    call(p, '2026-11-10 23:59:59'),
    // Another project's call today.
    answered(b.projectId, '2026-11-24 09:00:00', 600),
  ]);
  // A caller number marked as spam: 60 of 100 answered in its baseline (11-01), 5 of 50 on 11-19
  // in the afternoon (after 10:30: outside every same-time comparison).
  const marked = (day: string, n: number, answeredCount: number) =>
    Array.from({ length: n }, (_, i) => {
      const at = `${day} 15:${String(Math.floor(i / 2)).padStart(2, '0')}:${i % 2 ? '30' : '00'}`;
      const extra = { callerNumber: '02160880007' };
      return i < answeredCount ? answered(p, at, 20, extra) : call(p, at, extra);
    });
  await t.db.insert(calls).values([...marked('2026-11-01', 100, 60), ...marked('2026-11-19', 50, 5)]);
  await markAllHours(t.db, a.projectId);
  await markAllHours(t.db, b.projectId);
  await processDirty(t.db);

  // A running task outside its window (14:00–18:00) with 2 of 5 contacts done, and a paused one
  // whose only number rests.
  await t.db.insert(projectNumbers).values([
    { projectId: p, number: '02160880001' },
    { projectId: p, number: '02160880009', restingSince: cn('2026-11-20 09:00:00') },
  ]);
  runningTask = await insertTask(
    t.db,
    p,
    testSettings({
      name: '双十一回访',
      concurrency: 1,
      windows: [{ days: [1, 2, 3, 4, 5, 6, 7], start: '14:00', end: '18:00' }],
    }),
  );
  const contacts = await insertContacts(t.db, p, runningTask, 5);
  await t.db
    .update(taskContacts)
    .set({ status: 'done' })
    .where(inArray(taskContacts.id, contacts.slice(0, 2)));
  pausedTask = await insertTask(
    t.db,
    p,
    testSettings({ name: '老客户唤醒', callerNumbers: ['02160880009'] }),
    { state: 'paused' },
  );
  await t.db.insert(sipTrunks).values({
    id: randomUUID(),
    projectId: p,
    name: '电信中继',
    kind: 'register',
    registrar: 'sip.example.com',
    regStatus: 'failed',
    regDetail: '403 Forbidden：账号或密码错误',
    regAt: cn('2026-11-24 10:29:00'),
  } as typeof sipTrunks.$inferInsert);
}, 60_000);
afterAll(() => t?.app.close());

const get = async (headers = owner, projectId = a.projectId) => {
  const res = await t.app.inject({ method: 'GET', url: `/api/project/${projectId}/dashboard`, headers });
  return { status: res.statusCode, data: res.json().data as DashboardSummary };
};

describe('home dashboard (首页)', () => {
  it('counts today so far from the rollups, China time, live calls left out', async () => {
    const { status, data } = await get();
    expect(status).toBe(200);
    expect(data.today).toMatchObject({
      calls: 4,
      outbound: 3,
      inbound: 1,
      answered: 2,
      answerRate: 0.5,
      transferred: 1,
      talkMinutes: 3,
      abShare: 0.5,
      drill: {
        from: cn('2026-11-24 00:00:00').toISOString(),
        to: cn('2026-11-24 10:30:00').toISOString(),
        status: 'ended',
      },
    });
    // 11-18 … today: today's 4, yesterday's 4 and the marked number's 50 on 11-19.
    expect(data.last7Days.calls).toBe(58);
  });

  it('compares with yesterday and the week before up to the same minute', async () => {
    const { data } = await get();
    // 09:00 and 10:29 yesterday; 10:31 and 23:59:59 were later in the day.
    expect(data.yesterdaySameTime).toMatchObject({ calls: 2, answered: 1, answerRate: 0.5 });
    expect(data.yesterdaySameTime.drill).toEqual({
      from: cn('2026-11-23 00:00:00').toISOString(),
      to: new Date(cn('2026-11-23 10:30:00').getTime() - 1).toISOString(),
      status: 'ended',
    });
    // Yesterday's 2 and 11-17 10:00, over 7 days; no list reproduces an average.
    expect(data.weekAverageSameTime).toMatchObject({ calls: 0.4, answered: 0.3, drill: null });
    expect(data.weekAverageSameTime.answerRate).toBeCloseTo(2 / 3);
  });

  it('draws today and yesterday by hour and 14 days by day, each point with its call list', async () => {
    const { data } = await get();
    expect(data.trend.today).toHaveLength(11);
    expect(data.trend.today[0]).toMatchObject({ calls: 1, at: cn('2026-11-24 00:00:00').toISOString() });
    expect(data.trend.today[10]).toMatchObject({ calls: 2, answered: 1 });
    expect(data.trend.yesterday).toHaveLength(24);
    expect(data.trend.yesterday[23]?.calls).toBe(1);
    expect(data.trend.days).toHaveLength(14);
    expect(data.trend.days[0]).toMatchObject({ at: cn('2026-11-11 00:00:00').toISOString(), calls: 1 });
    expect(data.trend.days[13]?.calls).toBe(4);
    expect(data.trend.days[13]?.drill).toEqual({
      from: cn('2026-11-24 00:00:00').toISOString(),
      to: new Date(cn('2026-11-25 00:00:00').getTime() - 1).toISOString(),
      status: 'ended',
    });
  });

  it('drills every count to the list that shows the same calls', async () => {
    const { data } = await get();
    const total = async (drill: Record<string, string> | null) => {
      const res = await t.app.inject({
        url: `/api/project/${a.projectId}/calls?${new URLSearchParams(drill ?? {})}`,
        headers: owner,
      });
      return res.json().data.total as number;
    };
    for (const key of ['today', 'yesterdaySameTime', 'last7Days'] as const)
      expect(await total(data[key].drill), key).toBe(data[key].calls);
    for (const point of [...data.trend.today, ...data.trend.yesterday, ...data.trend.days].filter(
      (p) => p.calls,
    ))
      expect(await total(point.drill), point.at).toBe(point.calls);
  });

  it('shows running tasks with progress and when they should finish, windows included', async () => {
    const { data } = await get();
    expect(data.runningTasks.map((task) => task.name)).toEqual(['双十一回访']);
    const [task] = data.runningTasks;
    expect(task?.counts).toMatchObject({ total: 5, finished: 2, waiting: 3 });
    expect(task?.waitingUntil).toBe(cn('2026-11-24 14:00:00').toISOString());
    // 3 contacts × 60 s (no call yet) at concurrency 1 = 3 minutes after the window opens.
    expect(task?.expectedFinishAt).toBe(cn('2026-11-24 14:03:00').toISOString());
  });

  it('lists what needs attention, worst first, each with where to act', async () => {
    const { data } = await get();
    const kinds = data.attention.map((item) => item.kind);
    expect(kinds).toEqual([
      'trunk_failing',
      'task_no_numbers',
      'task_waiting_window',
      'task_paused',
      'number_warning',
      'number_resting',
    ]);
    expect(data.attention[0]).toMatchObject({
      level: 'error',
      title: '线路「电信中继」注册失败',
      detail: '403 Forbidden：账号或密码错误',
    });
    expect(data.attention[1]).toMatchObject({
      title: '任务「老客户唤醒」没有可用的外显号码',
      link: `/call-task/task-detail/${pausedTask}`,
    });
    expect(data.attention[2]).toMatchObject({
      detail: '11-24 14:00 继续呼叫',
      link: `/call-task/task-detail/${runningTask}`,
    });
    expect(data.attention[4]).toMatchObject({
      level: 'warning',
      title: '外显号码 02160880007 接通率骤降',
      detail: '近 7 天接通率 10%，此前 28 天 60%，可能已被标记，建议休息',
    });
    expect(data.attention[5]).toMatchObject({ title: '外显号码 02160880009 休息中', link: '/ivr/numbers' });
  });

  it('shows balance, concurrency limits and the calls up now; an empty balance comes first', async () => {
    const before = await get();
    // Not metered (hasBalance false): no limit, nothing to warn about.
    expect(before.data.limits).toMatchObject({ hasBalance: false, activeOutbound: 1, activeInbound: 0 });
    const limit = (values: Partial<typeof projectLimits.$inferInsert>) =>
      t.db.update(projectLimits).set(values).where(eq(projectLimits.projectId, a.projectId));
    await limit({ hasBalance: true, balanceFen: 0, concurrentCallout: 20, concurrentCallin: 5 });
    const empty = await get();
    expect(empty.data.limits).toMatchObject({ hasBalance: true, balanceFen: 0, concurrentCallout: 20 });
    expect(empty.data.attention[0]).toMatchObject({ kind: 'no_balance', level: 'error' });
    await limit({ balanceFen: 100 });
    expect((await get()).data.attention.map((item) => item.kind)).not.toContain('no_balance');
    await limit({ hasBalance: false, balanceFen: 0 });
  });

  it('shows each project only its own, and is closed to non-members', async () => {
    const other = await get(outsider, b.projectId);
    expect(other.status).toBe(200);
    expect(other.data.today).toMatchObject({ calls: 1, answerRate: 1, talkMinutes: 10 });
    expect(other.data.last7Days.calls).toBe(1);
    expect(other.data.runningTasks).toEqual([]);
    expect(other.data.attention.map((item) => item.kind)).not.toContain('trunk_failing');
    const denied = await t.app.inject({
      method: 'GET',
      url: `/api/project/${a.projectId}/dashboard`,
      headers: outsider,
    });
    expect(denied.statusCode).toBe(403);
    expect(JSON.stringify(denied.json())).not.toContain('双十一回访');
  });
});
