import type { EndReason } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, seedUser } from '../../../test/helpers';
import type { DatabaseHandle } from '../../db/client';
import { doNotCall, projectLimits, projectNumbers } from '../../db/schema';
import { VirtualClock } from '../clock';
import { chinaDate } from './calendar';
import { Dialer, type DialerOptions } from './dialer';
import {
  callsOf,
  contactsOf,
  type FakeCall,
  fakeDial,
  insertContacts,
  insertTask,
  taskState,
  testDialerStore,
  testSettings,
  waitFor,
} from './test-support';

let handle: DatabaseHandle;
let projectId: string;
const dialers: Dialer[] = [];
const clocks: Array<() => void> = [];

beforeEach(async () => {
  handle = await createTestDatabase();
  projectId = (await seedUser(handle.db, { email: `d${Date.now()}@example.com` })).projectId;
});

afterEach(async () => {
  for (const d of dialers.splice(0)) d.kill();
  for (const stop of clocks.splice(0)) stop();
  await handle.close();
});

function startDialer(
  clock: VirtualClock,
  script: Parameters<typeof fakeDial>[2],
  options: Partial<DialerOptions> = {},
) {
  const fake = fakeDial(handle.db, clock, script);
  const dialer = new Dialer({
    store: testDialerStore(handle),
    clock,
    processId: options.processId ?? `p-${dialers.length}`,
    dial: fake.dial,
    defaultCallerNumber: '02160880000',
    // Tests insert tasks straight into the database and wake the dialer; long idle sleeps keep days of simulated time cheap.
    maxIdleMs: 7 * 24 * 3600_000,
    ...options,
  });
  dialers.push(dialer);
  dialer.start();
  return { dialer, stats: fake.stats };
}

const autoClock = (iso: string) => {
  const clock = new VirtualClock({ startAt: Date.parse(iso) });
  clocks.push(clock.autoAdvance());
  return clock;
};

const done = (taskId: string) =>
  waitFor(async () => (await taskState(handle.db, taskId)) === 'completed', 30_000);

const answered = (): FakeCall => ({ endReason: 'completed', durationMs: 60_000 });

describe('Dialer: calendar', () => {
  it('waits outside the windows and calls inside them (China time)', async () => {
    // Monday 2026-03-02 12:30 China time: between the morning and afternoon windows.
    const clock = autoClock('2026-03-02T12:30:00+08:00');
    const taskId = await insertTask(
      handle.db,
      projectId,
      testSettings({
        windows: [
          { days: [1, 2, 3, 4, 5], start: '09:00', end: '12:00' },
          { days: [1, 2, 3, 4, 5], start: '14:00', end: '20:00' },
        ],
      }),
    );
    await insertContacts(handle.db, projectId, taskId, 3);
    startDialer(clock, answered);
    await done(taskId);
    const started = (await callsOf(handle.db, taskId)).map((c) => c.startedAt.getTime());
    expect(started).toHaveLength(3);
    for (const at of started) expect(at).toBe(Date.parse('2026-03-02T14:00:00+08:00'));
  });

  it('skips a 2026 public holiday and dials on a make-up Saturday (调休)', async () => {
    // Wednesday 2026-09-30 after hours; 1-7 October is the National Day break, 10 October a make-up Saturday.
    const clock = autoClock('2026-09-30T21:00:00+08:00');
    const weekdays = [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '20:00' }];
    const holiday = await insertTask(
      handle.db,
      projectId,
      testSettings({ name: '节假日', windows: weekdays, skipHolidays: true, endDate: '2026-10-10' }),
    );
    await insertContacts(handle.db, projectId, holiday, ['13900000001']);
    const { dialer } = startDialer(clock, answered);
    await done(holiday);
    const [call] = await callsOf(handle.db, holiday);
    // Not during the break: the first day dialled is after it (the 8th is the break's last day in 2026, or the 9th).
    const day = chinaDate(call!.startedAt.getTime());
    expect(day > '2026-10-07').toBe(true);
    expect(day <= '2026-10-10').toBe(true);

    // Starting on the make-up Saturday itself: it is dialled that day, with the weekday windows.
    const saturday = await insertTask(
      handle.db,
      projectId,
      testSettings({ name: '调休', windows: weekdays, skipHolidays: true, startDate: '2026-10-10' }),
    );
    await insertContacts(handle.db, projectId, saturday, ['13900000002']);
    dialer.wake();
    await waitFor(async () => (await callsOf(handle.db, saturday)).length === 1, 30_000);
    const [sat] = await callsOf(handle.db, saturday);
    expect(sat!.startedAt.getTime()).toBeGreaterThanOrEqual(Date.parse('2026-10-10T09:00:00+08:00'));
    expect(chinaDate(sat!.startedAt.getTime())).toBe('2026-10-10');
  });
});

describe('Dialer: outcomes', () => {
  it('retries per outcome with the rule interval, up to its attempts', async () => {
    const clock = autoClock('2026-03-02T09:00:00+08:00');
    const taskId = await insertTask(
      handle.db,
      projectId,
      testSettings({
        retryRules: {
          no_answer: { maxRetries: 2, intervalMinutes: 60 },
          busy: { maxRetries: 1, intervalMinutes: 30 },
        },
      }),
    );
    const [noAnswer, busyThenAnswer, vacant, answers] = await insertContacts(handle.db, projectId, taskId, 4);
    const plan: Record<string, (attempt: number) => EndReason> = {
      [noAnswer!]: () => 'no_answer',
      [busyThenAnswer!]: (a) => (a === 1 ? 'busy' : 'completed'),
      [vacant!]: () => 'vacant',
      [answers!]: () => 'completed',
    };
    startDialer(clock, (job) => ({ endReason: plan[job.contact.id]!(job.attempt), durationMs: 20_000 }));
    await done(taskId);
    const contacts = new Map((await contactsOf(handle.db, taskId)).map((c) => [c.id, c]));
    expect(contacts.get(noAnswer!)).toMatchObject({
      status: 'failed',
      attempts: 3,
      lastEndReason: 'no_answer',
    });
    expect(contacts.get(busyThenAnswer!)).toMatchObject({
      status: 'done',
      attempts: 2,
      lastEndReason: 'completed',
    });
    // No rule for vacant numbers: one call.
    expect(contacts.get(vacant!)).toMatchObject({ status: 'failed', attempts: 1 });
    expect(contacts.get(answers!)).toMatchObject({ status: 'done', attempts: 1 });

    const calls = await callsOf(handle.db, taskId);
    const startsOf = (id: string) =>
      calls.filter((c) => c.contactId === id).map((c) => c.startedAt.getTime());
    const na = startsOf(noAnswer!);
    expect(na).toHaveLength(3);
    // Next attempt ≥ end of the previous (20 s) + 60 minutes.
    expect(na[1]! - na[0]!).toBeGreaterThanOrEqual(60 * 60_000);
    expect(na[2]! - na[1]!).toBeGreaterThanOrEqual(60 * 60_000);
    const busy = startsOf(busyThenAnswer!);
    expect(busy[1]! - busy[0]!).toBeGreaterThanOrEqual(30 * 60_000);
    expect(busy[1]! - busy[0]!).toBeLessThan(60 * 60_000);
  });

  it('skips numbers on the do-not-call list without calling them', async () => {
    const clock = autoClock('2026-03-02T09:00:00+08:00');
    const taskId = await insertTask(handle.db, projectId, testSettings());
    await handle.db.insert(doNotCall).values({ projectId, phone: '13900000002', source: 'manual' });
    await insertContacts(handle.db, projectId, taskId, ['13900000001', '13900000002']);
    startDialer(clock, answered);
    await done(taskId);
    const contacts = await contactsOf(handle.db, taskId);
    expect(contacts[1]).toMatchObject({ status: 'skipped', attempts: 0, skipReason: '免打扰号码' });
    expect(contacts[0]).toMatchObject({ status: 'done', attempts: 1 });
    expect((await callsOf(handle.db, taskId)).map((c) => c.calleeNumber)).toEqual(['13900000001']);
  });

  it('caps calls per number per China-time day across the tasks of a project', async () => {
    const clock = autoClock('2026-03-02T09:00:00+08:00');
    const settings = testSettings({
      dailyCapPerNumber: 1,
      windows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '18:00' }],
    });
    const first = await insertTask(handle.db, projectId, { ...settings, name: 'A' });
    const second = await insertTask(handle.db, projectId, { ...settings, name: 'B' });
    await insertContacts(handle.db, projectId, first, ['13900000001', '13900000002']);
    await insertContacts(handle.db, projectId, second, ['13900000001', '13900000003']);
    startDialer(clock, answered);
    await done(first);
    await done(second);
    const all = [...(await callsOf(handle.db, first)), ...(await callsOf(handle.db, second))];
    expect(all).toHaveLength(4);
    const shared = all.filter((c) => c.calleeNumber === '13900000001').map((c) => c.startedAt.getTime());
    expect(shared).toHaveLength(2);
    // One call to the shared number on Monday, the other on Tuesday's first window.
    expect(new Set(shared.map(chinaDate))).toEqual(new Set(['2026-03-02', '2026-03-03']));
    expect(Math.max(...shared)).toBe(Date.parse('2026-03-03T09:00:00+08:00'));
    // The deferral is not an attempt.
    for (const c of [...(await contactsOf(handle.db, first)), ...(await contactsOf(handle.db, second))]) {
      expect(c.attempts).toBe(1);
    }
  });
});

describe('Dialer: concurrency', () => {
  it('respects each task concurrency and the project cap across two tasks', async () => {
    await handle.db
      .update(projectLimits)
      .set({ hasBalance: true, balanceFen: 10_000, concurrentCallout: 6 })
      .where(eq(projectLimits.projectId, projectId));
    const clock = autoClock('2026-03-02T09:00:00+08:00');
    const a = await insertTask(handle.db, projectId, testSettings({ name: 'A', concurrency: 4 }));
    const b = await insertTask(handle.db, projectId, testSettings({ name: 'B', concurrency: 4 }));
    await insertContacts(handle.db, projectId, a, 20);
    await insertContacts(handle.db, projectId, b, 20);
    let i = 0;
    const { stats } = startDialer(clock, () => ({
      endReason: 'completed',
      durationMs: 30_000 + (i++ % 7) * 5000,
    }));
    await done(a);
    await done(b);
    expect(stats.peakAll).toBe(6);
    expect(stats.peakByTask.get(a)).toBeLessThanOrEqual(4);
    expect(stats.peakByTask.get(b)).toBeLessThanOrEqual(4);
    expect((await callsOf(handle.db, a)).length + (await callsOf(handle.db, b)).length).toBe(40);
  });
});

describe('Dialer: crash', () => {
  it('recovers a dead process: unstarted attempts given back, cut-off calls interrupted and retried', async () => {
    const clock = autoClock('2026-03-02T09:00:00+08:00');
    const taskId = await insertTask(
      handle.db,
      projectId,
      testSettings({
        concurrency: 6,
        retryRules: {
          interrupted: { maxRetries: 1, intervalMinutes: 5 },
          no_answer: { maxRetries: 1, intervalMinutes: 10 },
        },
      }),
    );
    await insertContacts(handle.db, projectId, taskId, 12);
    // The first process: a few calls end, then it dies with 3 calls live and 3 claimed but not yet started.
    let n = 0;
    const neverStarted: string[] = [];
    const first = startDialer(
      clock,
      (job) => {
        n++;
        if (n <= 4) return { endReason: n % 2 ? 'completed' : 'no_answer', durationMs: 10_000 };
        if (n <= 7) return { endReason: 'completed', durationMs: 0, hang: 'live' };
        neverStarted.push(job.contact.id);
        return { endReason: 'completed', durationMs: 0, hang: 'before-record' };
      },
      { processId: 'dead', leaseMs: 60_000 },
    );
    await waitFor(() => n >= 10, 10_000, 'the first process to claim its calls');
    await waitFor(
      async () => (await contactsOf(handle.db, taskId)).filter((c) => c.status === 'dialing').length === 6,
    );
    first.dialer.kill();
    const crashedAt = clock.now();

    const second = startDialer(
      clock,
      (job) => ({
        endReason: job.attempt === 1 && job.contact.id.endsWith('1') ? 'no_answer' : 'completed',
        durationMs: 15_000,
      }),
      { processId: 'alive', leaseMs: 60_000 },
    );
    await done(taskId);

    const contacts = await contactsOf(handle.db, taskId);
    const calls = await callsOf(handle.db, taskId);
    for (const c of contacts) {
      expect(['done', 'failed']).toContain(c.status);
      expect(c.attempts).toBeLessThanOrEqual(2);
      // Every attempt is exactly one call, with the attempt's id: nobody dialled twice for one attempt.
      const own = calls.filter((call) => call.contactId === c.id).map((call) => call.id);
      expect(own.sort()).toEqual(Array.from({ length: c.attempts }, (_, i) => `${c.id}.${i + 1}`));
    }
    const interrupted = calls.filter((c) => c.endReason === 'interrupted');
    expect(interrupted).toHaveLength(3);
    for (const call of interrupted) {
      expect(call.hangupBy).toBe('system');
      // Closed by the second process, once the dead one's lease ran out.
      expect(call.endedAt!.getTime()).toBeGreaterThan(crashedAt);
      const retried = calls.find((c) => c.id === `${call.contactId}.2`);
      expect(retried?.startedAt.getTime()).toBeGreaterThanOrEqual(call.endedAt!.getTime() + 5 * 60_000);
    }
    expect(second.dialer.liveCalls).toBe(0);
    expect((await contactsOf(handle.db, taskId)).filter((c) => c.leaseOwner !== null)).toHaveLength(0);
    // Claimed but never started: the attempt was given back, so their first call came after the lease ran out.
    expect(neverStarted).toHaveLength(3);
    for (const id of neverStarted) {
      const firstCall = calls.find((c) => c.id === `${id}.1`);
      expect(firstCall?.startedAt.getTime()).toBeGreaterThan(crashedAt);
    }
  });
});

describe('Dialer: shutdown', () => {
  it('cuts calls off after the grace period: their contacts count them as interrupted and retry', async () => {
    const clock = autoClock('2026-03-02T09:00:00+08:00');
    const taskId = await insertTask(
      handle.db,
      projectId,
      testSettings({ retryRules: { interrupted: { maxRetries: 1, intervalMinutes: 5 } } }),
    );
    await insertContacts(handle.db, projectId, taskId, 2);
    const live = fakeDial(handle.db, clock, () => ({ endReason: 'completed', durationMs: 0, hang: 'live' }));
    // Like placeCall: the call ends when the dialer's signal aborts, with whatever reason the call engine gives it.
    const { dialer } = startDialer(clock, answered, {
      stopGraceMs: 50,
      dial: (job) => {
        void live.dial(job);
        return new Promise((resolve) =>
          job.signal.addEventListener('abort', () => resolve({ callId: job.callId, endReason: 'failed' })),
        );
      },
    });
    await waitFor(async () => (await callsOf(handle.db, taskId)).length === 2, 10_000, 'two live calls');
    await dialer.stop();

    for (const contact of await contactsOf(handle.db, taskId)) {
      expect(contact).toMatchObject({
        status: 'retry',
        attempts: 1,
        lastEndReason: 'interrupted',
        leaseOwner: null,
      });
    }
    // The call records are the call engine's to end: the dialer writes none.
    for (const call of await callsOf(handle.db, taskId)) {
      expect(call).toMatchObject({ status: 'ringing', endReason: null });
    }
  });
});

describe('Dialer: caller numbers', () => {
  const numbers = async (list: Array<{ number: string; enabled?: boolean; resting?: boolean }>) =>
    handle.db.insert(projectNumbers).values(
      list.map((n) => ({
        projectId,
        number: n.number,
        enabled: n.enabled ?? true,
        restingSince: n.resting ? new Date('2026-03-01T00:00:00Z') : null,
      })),
    );

  it('calls only from numbers that are enabled and not resting (休息中)', async () => {
    await numbers([
      { number: '02160880001' },
      { number: '02160880002', resting: true },
      { number: '02160880003', enabled: false },
      { number: '02160880004' },
    ]);
    const clock = autoClock('2026-03-02T10:00:00+08:00');
    const taskId = await insertTask(
      handle.db,
      projectId,
      testSettings({ callerNumbers: ['02160880001', '02160880002', '02160880003', '02160880004'] }),
    );
    await insertContacts(handle.db, projectId, taskId, 6);
    startDialer(clock, answered);
    await done(taskId);
    const used = (await callsOf(handle.db, taskId)).map((c) => c.callerNumber);
    expect(used).toHaveLength(6);
    expect(new Set(used)).toEqual(new Set(['02160880001', '02160880004']));
  });

  it('places no call while every number of the task rests, and resumes when one is back', async () => {
    await numbers([{ number: '02160880001', resting: true }]);
    const clock = autoClock('2026-03-02T10:00:00+08:00');
    const taskId = await insertTask(handle.db, projectId, testSettings({ callerNumbers: ['02160880001'] }));
    await insertContacts(handle.db, projectId, taskId, 2);
    const { dialer } = startDialer(clock, answered);
    await clock.sleep(60_000);
    expect(await callsOf(handle.db, taskId)).toHaveLength(0);
    expect(await taskState(handle.db, taskId)).toBe('running');

    await handle.db.update(projectNumbers).set({ restingSince: null });
    dialer.wake();
    await done(taskId);
    expect((await callsOf(handle.db, taskId)).map((c) => c.callerNumber)).toEqual([
      '02160880001',
      '02160880001',
    ]);
  });
});
