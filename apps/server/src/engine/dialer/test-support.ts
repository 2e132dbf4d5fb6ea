import { randomUUID } from 'node:crypto';
import type { EndReason, TaskSettings } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import type { Database, DatabaseHandle } from '../../db/client';
import { calls, callTasks, taskContacts } from '../../db/schema';
import { CallEventHub } from '../../modules/calls/call-events';
import { CallRepository } from '../../modules/calls/call-repository';
import { createDialerStore } from '../../modules/tasks/dialer-store';
import type { Clock } from '../clock';
import type { DialJob, DialResult } from './ports';

/** Tests only: settings that call around the clock with no cap unless a test says otherwise. */
export const testSettings = (overrides: Partial<TaskSettings> = {}): TaskSettings => ({
  name: '测试任务',
  assistantId: 'none',
  callerNumbers: [],
  startDate: '2025-01-01',
  endDate: '2030-12-31',
  windows: [{ days: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '24:00' }],
  skipHolidays: false,
  concurrency: 5,
  retryRules: {},
  dailyCapPerNumber: 0,
  ...overrides,
});

/** A task row straight in the database (the HTTP layer is tested elsewhere). */
export async function insertTask(
  db: Database,
  projectId: string,
  settings: TaskSettings,
  options: {
    state?: 'draft' | 'pending' | 'running' | 'paused';
    id?: string;
    assistantId?: string | null;
  } = {},
): Promise<string> {
  const id = options.id ?? randomUUID();
  await db.insert(callTasks).values({
    id,
    projectId,
    name: settings.name,
    state: options.state ?? 'running',
    assistantId: options.assistantId ?? null,
    assistantVersion: options.assistantId ? 1 : null,
    settings,
    startedAt: options.state === 'draft' ? null : new Date(),
  });
  return id;
}

/** Contacts for a task; phones default to distinct mobiles. */
export async function insertContacts(
  db: Database,
  projectId: string,
  taskId: string,
  phones: string[] | number,
): Promise<string[]> {
  const list =
    typeof phones === 'number'
      ? Array.from({ length: phones }, (_, i) => `139${String(i).padStart(8, '0')}`)
      : phones;
  const rows = list.map((phone, i) => ({
    id: `${taskId.slice(0, 8)}-c${String(i).padStart(5, '0')}`,
    taskId,
    projectId,
    phone,
    name: `联系人${i + 1}`,
    rowNumber: i + 1,
  }));
  for (let i = 0; i < rows.length; i += 1000) await db.insert(taskContacts).values(rows.slice(i, i + 1000));
  return rows.map((r) => r.id);
}

export interface FakeCall {
  endReason: EndReason;
  /** Clock ms from dial to end. */
  durationMs: number;
  /** Never ends (the process dies with it live); 'before-record' hangs before the record exists. */
  hang?: 'before-record' | 'live';
}

/**
 * A dial function that behaves like placeCall for the dialer: writes the call record with the
 * job's id, waits the call's duration on the clock, ends it. Tracks live calls per task/project.
 */
export function fakeDial(db: Database, clock: Clock, script: (job: DialJob) => FakeCall) {
  const active = new Map<string, number>();
  let activeAll = 0;
  const stats = { peakAll: 0, peakByTask: new Map<string, number>(), dialled: [] as string[] };
  const tracking = clock as { track?: <R>(q: Promise<R>) => Promise<R> };
  const track = <T>(p: Promise<T>): Promise<T> => (tracking.track ? tracking.track(p) : p);
  const dial = async (job: DialJob): Promise<DialResult> => {
    const plan = script(job);
    if (plan.hang === 'before-record') return new Promise<DialResult>(() => {});
    stats.dialled.push(job.callId);
    await track(
      db.insert(calls).values({
        id: job.callId,
        projectId: job.task.projectId,
        direction: 'outbound',
        callerNumber: job.callerNumber,
        calleeNumber: job.contact.phone,
        taskId: job.task.id,
        taskName: job.task.name,
        contactId: job.contact.id,
        contactName: job.contact.name,
        assistantId: null,
        assistantVersion: null,
        status: 'ringing',
        startedAt: new Date(clock.now()),
      }),
    );
    active.set(job.task.id, (active.get(job.task.id) ?? 0) + 1);
    activeAll++;
    stats.peakAll = Math.max(stats.peakAll, activeAll);
    stats.peakByTask.set(
      job.task.id,
      Math.max(stats.peakByTask.get(job.task.id) ?? 0, active.get(job.task.id) ?? 0),
    );
    if (plan.hang === 'live') return new Promise<DialResult>(() => {});
    try {
      await clock.sleep(plan.durationMs);
    } finally {
      active.set(job.task.id, (active.get(job.task.id) ?? 1) - 1);
      activeAll--;
    }
    await track(
      db
        .update(calls)
        .set({
          status: 'ended',
          endReason: plan.endReason,
          hangupBy: 'system',
          endedAt: new Date(clock.now()),
        })
        .where(eq(calls.id, job.callId)),
    );
    return { callId: job.callId, endReason: plan.endReason };
  };
  return { dial, stats };
}

/** Polls (real time) until `check` holds. */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 20_000,
  what = 'condition',
) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function taskState(db: Database, taskId: string) {
  const [row] = await db.select({ state: callTasks.state }).from(callTasks).where(eq(callTasks.id, taskId));
  return row?.state;
}

export async function contactsOf(db: Database, taskId: string) {
  return db
    .select()
    .from(taskContacts)
    .where(eq(taskContacts.taskId, taskId))
    .orderBy(taskContacts.rowNumber);
}

export async function callsOf(db: Database, taskId: string) {
  return db.select().from(calls).where(eq(calls.taskId, taskId)).orderBy(calls.startedAt, calls.id);
}

/** Tests only: the dialer's store over a database, with the call repository closing cut-off calls. */
export function testDialerStore(handle: Pick<DatabaseHandle, 'db' | 'kind'>) {
  return createDialerStore(handle.db, {
    calls: new CallRepository(handle.db, new CallEventHub(), {
      owner: 'dialer-test',
      singleProcess: handle.kind === 'pglite',
    }),
  });
}
