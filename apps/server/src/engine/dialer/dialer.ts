import { setMaxListeners } from 'node:events';
import {
  type EndReason,
  RETRYABLE_END_REASONS,
  type RetryOutcome,
  type TaskSettings,
} from '@callpilot/contracts';
import { and, asc, eq, gt, inArray, isNull, lt, lte, min, ne, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { calls, callTasks, doNotCall, projectLimits, taskContacts } from '../../db/schema';
import type { Clock } from '../clock';
import {
  chinaDate,
  chinaDayStart,
  chinaMidnight,
  firstMomentOfNextDay,
  inCallingWindow,
  nextCallingMoment,
  pastEndDate,
} from './calendar';

/** What the dialer knows of a task while it dials. */
export interface DialTask {
  id: string;
  projectId: string;
  name: string;
  assistantId: string | null;
  assistantVersion: number | null;
  settings: TaskSettings;
}

export interface DialContact {
  id: string;
  phone: string;
  name: string;
  variables: Record<string, string>;
}

export interface DialJob {
  task: DialTask;
  contact: DialContact;
  /** 1-based: this call is the contact's n-th attempt. */
  attempt: number;
  /** `${contactId}.${attempt}`: the call record MUST get exactly this id (crash recovery looks for it). */
  callId: string;
  callerNumber: string;
  /** Aborted when the dialer shuts down with calls still live. */
  signal: AbortSignal;
}

export interface DialResult {
  callId: string;
  endReason: EndReason;
}

export interface DialerLog {
  warn(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
}

export interface DialerOptions {
  db: Database;
  clock: Clock;
  /** Unique per process (and per Dialer): leases name their owner. */
  processId: string;
  /** Places one call; resolves when it ended. Must create the call record with `job.callId`. */
  dial: (job: DialJob) => Promise<DialResult>;
  /** How long a claim stays valid without a heartbeat (clock ms). */
  leaseMs?: number;
  /** Pause between ticks while calls are live or work is due (clock ms). */
  tickMs?: number;
  /** Longest sleep when nothing is due (clock ms): bounds how late a task started elsewhere is seen. */
  maxIdleMs?: number;
  /** Calls this process runs at once, across projects. */
  maxProcessConcurrency?: number;
  /**
   * Cap for projects without balance limits (hasBalance false: the spec's unmetered projects).
   * 200 keeps one tenant from exhausting the carrier trunk; a deployment can raise it.
   */
  defaultProjectCap?: number;
  /** The caller number when a task names none (the simulated carrier's). */
  defaultCallerNumber?: string;
  /**
   * Embedded (single-process) databases: every lease not held by this dialer belongs to a process
   * that is gone, so they are recovered at once on start instead of after they expire.
   */
  recoverForeignLeasesAtStart?: boolean;
  /** Real milliseconds stop() waits for live calls before cutting them off. */
  stopGraceMs?: number;
  /** Real milliseconds between polls when no task is running or pending (other processes may start one). */
  idlePollMs?: number;
  /**
   * Which tasks this dialer handles (default all). The demo seeding runs its own dialer on a
   * simulated clock over its tasks while the server's dialer leaves them alone.
   */
  ownsTask?: (taskId: string) => boolean;
  log?: DialerLog;
  /** Told whenever a task's counts or state may have changed (claims, call ends, state moves). */
  onTaskChanged?: (projectId: string, taskId: string) => void;
  /**
   * Retry intervals are divided by this (SIM_TIME_SCALE): when simulated calls run N× faster
   * than real time, a simulated task's waits between attempts shrink with them. Default 1.
   */
  retryTimeScale?: number;
}

/** What the contact becomes after a call ended with `endReason` on its `attempts`-th attempt. */
export function contactOutcome(
  settings: Pick<TaskSettings, 'retryRules'>,
  endReason: EndReason,
  attempts: number,
  now: number,
  timeScale = 1,
): { status: 'done' | 'retry' | 'failed'; nextAttemptAt: Date | null } {
  if (!(RETRYABLE_END_REASONS as readonly string[]).includes(endReason)) {
    return { status: 'done', nextAttemptAt: null };
  }
  const rule = settings.retryRules[endReason as RetryOutcome];
  if (rule && attempts < 1 + rule.maxRetries) {
    return { status: 'retry', nextAttemptAt: new Date(now + (rule.intervalMinutes * 60_000) / timeScale) };
  }
  return { status: 'failed', nextAttemptAt: null };
}

export const callIdFor = (contactId: string, attempt: number) => `${contactId}.${attempt}`;

/** The most calls a task may make: contacts × (1 + the largest retry count). */
export const maxAttemptsOf = (settings: Pick<TaskSettings, 'retryRules'>) =>
  1 + Math.max(0, ...Object.values(settings.retryRules).map((r) => r?.maxRetries ?? 0));

type ContactRow = typeof taskContacts.$inferSelect;

interface LiveCall {
  taskId: string;
  projectId: string;
  promise: Promise<void>;
}

/**
 * The outbound dialer of one process. Each tick it recovers expired leases, moves tasks between
 * states by the calendar, claims due contacts under a per-project advisory lock (so several
 * processes on one PostgreSQL never exceed a cap or dial a contact twice) and starts their calls
 * in the background. `attempts` is incremented in the claim itself, before any call starts, so a
 * crash at any point can never give a contact more calls than its rules allow.
 */
export class Dialer {
  private readonly db: Database;
  private readonly clock: Clock;
  readonly processId: string;
  private readonly leaseMs: number;
  private readonly tickMs: number;
  private readonly maxIdleMs: number;
  private readonly processCap: number;
  private readonly defaultProjectCap: number;
  private readonly live = new Map<string, LiveCall>();
  private readonly roundRobin = new Map<string, number>();
  private readonly abort = new AbortController();
  private sleeper: AbortController | null = null;
  private woken = false;
  private loop: Promise<void> | null = null;
  private stopping = false;
  private killed = false;
  private lastRenew = 0;
  private startedRecovery = false;
  /** The earliest start date of a pending task, seen by the last tick. */
  private pendingWakeAt = Number.POSITIVE_INFINITY;
  /** Highest number of calls this dialer had live at once (tests and the bench read it). */
  peakLive = 0;

  constructor(private readonly options: DialerOptions) {
    // Every live call waits on this one shutdown signal: hundreds of listeners are expected, not a leak.
    setMaxListeners(0, this.abort.signal);
    this.db = options.db;
    this.clock = options.clock;
    this.processId = options.processId;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.tickMs = options.tickMs ?? 1000;
    this.maxIdleMs = options.maxIdleMs ?? 30_000;
    this.processCap = options.maxProcessConcurrency ?? 500;
    this.defaultProjectCap = options.defaultProjectCap ?? 200;
  }

  get liveCalls(): number {
    return this.live.size;
  }

  /** Calls of `taskId` this process is running now. */
  liveCallsOf(taskId: string): number {
    let n = 0;
    for (const call of this.live.values()) if (call.taskId === taskId) n++;
    return n;
  }

  start(): void {
    if (this.loop) return;
    this.loop = this.run();
  }

  /** Runs a tick soon (a task was started or resumed, a call ended). */
  wake(): void {
    this.woken = true;
    this.sleeper?.abort();
  }

  /** Stops claiming, waits (bounded) for live calls, then cuts the rest off as interrupted. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.wake();
    await this.loop?.catch(() => {});
    const grace = this.options.stopGraceMs ?? 5000;
    const all = () => Promise.allSettled([...this.live.values()].map((c) => c.promise));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), grace);
    });
    const result = await Promise.race([all().then(() => 'done' as const), timeout]);
    clearTimeout(timer);
    if (result === 'timeout') {
      this.abort.abort(new Error('dialer stopping'));
      const cut = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 2000);
      });
      await Promise.race([all(), cut]);
      clearTimeout(timer);
    }
  }

  /**
   * Test-only: the process dies here (kill -9). Nothing more is written, no lease is renewed or
   * released; live calls are abandoned as they are.
   */
  kill(): void {
    this.killed = true;
    this.stopping = true;
    this.sleeper?.abort();
  }

  /** Resolves when this dialer has no live call. */
  async idle(): Promise<void> {
    while (this.live.size) await Promise.allSettled([...this.live.values()].map((c) => c.promise));
  }

  private io<T>(work: Promise<T>): Promise<T> {
    // A simulated clock must stand still while the dialer's own database work is in flight.
    const clock = this.clock as { track?: <R>(p: Promise<R>) => Promise<R> };
    return clock.track ? clock.track(work) : work;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      this.woken = false;
      let sleepMs = this.tickMs;
      try {
        sleepMs = await this.io(this.tick());
      } catch (err) {
        this.options.log?.warn({ err }, 'dialer tick failed');
      }
      if (this.stopping) break;
      if (this.woken) {
        // Let the calls that woke us settle into the same tick instead of one tick each.
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      const sleeper = new AbortController();
      this.sleeper = sleeper;
      try {
        if (sleepMs === Number.POSITIVE_INFINITY) {
          // Nothing to dial: a real timer, so an idle dialer never moves a simulated clock.
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.options.idlePollMs ?? 5000);
            timer.unref?.();
            sleeper.signal.addEventListener('abort', () => {
              clearTimeout(timer);
              resolve();
            });
          });
        } else {
          await this.clock.sleep(Math.max(1, sleepMs), sleeper.signal);
        }
      } catch {
        // woken
      } finally {
        this.sleeper = null;
      }
    }
  }

  /** One pass; resolves with how long to sleep before the next (clock ms). */
  async tick(): Promise<number> {
    const now = this.clock.now();
    if (!this.startedRecovery) {
      this.startedRecovery = true;
      if (this.options.recoverForeignLeasesAtStart) await this.recoverLeases(now, true);
    }
    await this.renewLeases(now);
    await this.recoverLeases(now, false);
    this.pendingWakeAt = Number.POSITIVE_INFINITY;
    const tasks = await this.activeTasks(now);
    let wakeAt = Math.min(now + this.maxIdleMs, this.pendingWakeAt);
    let pollSoon = false;
    const caps = new Map<string, number>();
    for (const task of tasks) {
      if (this.stopping) break;
      if (!inCallingWindow(task.settings, now)) {
        const next = nextCallingMoment(task.settings, now);
        if (next !== null) wakeAt = Math.min(wakeAt, next);
        continue;
      }
      const free = this.processCap - this.live.size;
      if (free <= 0) break;
      let cap = caps.get(task.projectId);
      if (cap === undefined) {
        cap = await this.projectCap(task.projectId);
        caps.set(task.projectId, cap);
      }
      const claim = await this.claim(task, now, Math.min(free, task.settings.concurrency), cap);
      // Slots held by other processes free up without waking us: poll while they block us.
      if (claim.blockedByOthers) pollSoon = true;
      for (const contact of claim.contacts) this.launch(task, contact);
      if (claim.contacts.length) this.options.onTaskChanged?.(task.projectId, task.id);
      else if (this.liveCallsOf(task.id) === 0 && !(await this.hasOpenContacts(task.id))) {
        // Its last contacts were finished by another process, or by recovery.
        await this.complete(task, now, false);
      }
    }
    if (pollSoon) return this.tickMs;
    if (tasks.length === 0 && this.live.size === 0 && this.pendingWakeAt === Number.POSITIVE_INFINITY) {
      const [dialing] = await this.db
        .select({ id: taskContacts.id })
        .from(taskContacts)
        .where(eq(taskContacts.status, 'dialing'))
        .limit(1);
      if (!dialing) return Number.POSITIVE_INFINITY;
    }
    // Calls ending wake the loop; otherwise sleep until the next retry, lease expiry, renewal or window.
    if (this.live.size > 0) wakeAt = Math.min(wakeAt, this.lastRenew + this.leaseMs / 3);
    const [next] = await this.db
      .select({ retry: min(taskContacts.nextAttemptAt) })
      .from(taskContacts)
      .innerJoin(callTasks, eq(callTasks.id, taskContacts.taskId))
      .where(
        and(
          eq(callTasks.state, 'running'),
          inArray(taskContacts.status, ['pending', 'retry']),
          gt(taskContacts.nextAttemptAt, new Date(now)),
        ),
      );
    const [lease] = await this.db
      .select({ until: min(taskContacts.leaseUntil) })
      .from(taskContacts)
      .where(eq(taskContacts.status, 'dialing'));
    if (next?.retry) wakeAt = Math.min(wakeAt, new Date(next.retry).getTime());
    // Recovery needs lease_until < now: one millisecond past it.
    if (lease?.until) wakeAt = Math.min(wakeAt, new Date(lease.until).getTime() + 1);
    return Math.max(1, wakeAt - now);
  }

  private async projectCap(projectId: string): Promise<number> {
    const [limits] = await this.db
      .select({ hasBalance: projectLimits.hasBalance, concurrentCallout: projectLimits.concurrentCallout })
      .from(projectLimits)
      .where(eq(projectLimits.projectId, projectId))
      .limit(1);
    return limits?.hasBalance ? limits.concurrentCallout : this.defaultProjectCap;
  }

  /** Running tasks, after moving pending ones whose start arrived and finishing exhausted ones. */
  private async activeTasks(now: number): Promise<DialTask[]> {
    const owns = this.options.ownsTask;
    const rows = (
      await this.db
        .select()
        .from(callTasks)
        .where(and(inArray(callTasks.state, ['pending', 'running']), isNull(callTasks.deletedAt)))
        .orderBy(asc(callTasks.startedAt))
    ).filter((row) => !owns || owns(row.id));
    const today = chinaDate(now);
    const tasks: DialTask[] = [];
    for (const row of rows) {
      const settings = row.settings as TaskSettings;
      const task: DialTask = {
        id: row.id,
        projectId: row.projectId,
        name: row.name,
        assistantId: row.assistantId,
        assistantVersion: row.assistantVersion,
        settings,
      };
      if (row.state === 'pending') {
        if (today < settings.startDate) {
          this.pendingWakeAt = Math.min(this.pendingWakeAt, chinaMidnight(settings.startDate));
          continue;
        }
        await this.db
          .update(callTasks)
          .set({ state: 'running' })
          .where(and(eq(callTasks.id, row.id), eq(callTasks.state, 'pending')));
        this.options.onTaskChanged?.(row.projectId, row.id);
      }
      if (pastEndDate(settings, now)) {
        await this.complete(task, now, true);
        continue;
      }
      tasks.push(task);
    }
    return tasks;
  }

  private async hasOpenContacts(taskId: string): Promise<boolean> {
    const [open] = await this.db
      .select({ id: taskContacts.id })
      .from(taskContacts)
      .where(
        and(eq(taskContacts.taskId, taskId), inArray(taskContacts.status, ['pending', 'retry', 'dialing'])),
      )
      .limit(1);
    return open !== undefined;
  }

  /** running → completed (all contacts final, or the end date passed with calls none live). */
  private async complete(task: DialTask, now: number, endDatePassed: boolean): Promise<void> {
    if (endDatePassed) {
      const [dialing] = await this.db
        .select({ id: taskContacts.id })
        .from(taskContacts)
        .where(and(eq(taskContacts.taskId, task.id), eq(taskContacts.status, 'dialing')))
        .limit(1);
      if (dialing) return;
    }
    const moved = await this.db
      .update(callTasks)
      .set({ state: 'completed', finishedAt: new Date(now) })
      .where(and(eq(callTasks.id, task.id), eq(callTasks.state, 'running')))
      .returning({ id: callTasks.id });
    if (moved.length) this.options.onTaskChanged?.(task.projectId, task.id);
  }

  /**
   * Claims up to `want` due contacts of a task in one transaction. The project's advisory lock
   * serialises claims of one project across processes, so the dialing counts read here are exact
   * and the caps hold; SKIP LOCKED keeps claims of other tasks from waiting on each other.
   */
  private async claim(
    task: DialTask,
    now: number,
    want: number,
    projectCap: number,
  ): Promise<{ contacts: ContactRow[]; blockedByOthers: boolean }> {
    const at = new Date(now);
    const settings = task.settings;
    let blockedByOthers = false;
    const contacts = await this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`dial:${task.projectId}`}))`);
      const [counts] = await tx
        .select({
          project: sql<number>`count(*)::int`,
          task: sql<number>`(count(*) filter (where ${taskContacts.taskId} = ${task.id}))::int`,
        })
        .from(taskContacts)
        .where(and(eq(taskContacts.projectId, task.projectId), eq(taskContacts.status, 'dialing')));
      const n = Math.min(
        want,
        settings.concurrency - (counts?.task ?? 0),
        projectCap - (counts?.project ?? 0),
      );
      let own = 0;
      for (const call of this.live.values()) if (call.projectId === task.projectId) own++;
      blockedByOthers = n < want && (counts?.project ?? 0) > own;
      if (n <= 0) return [];
      const due = await tx
        .select({ id: taskContacts.id })
        .from(taskContacts)
        .where(
          and(
            eq(taskContacts.taskId, task.id),
            inArray(taskContacts.status, ['pending', 'retry']),
            or(isNull(taskContacts.nextAttemptAt), lte(taskContacts.nextAttemptAt, at)),
          ),
        )
        .orderBy(sql`${taskContacts.nextAttemptAt} asc nulls first`, asc(taskContacts.rowNumber))
        .limit(n)
        .for('update', { skipLocked: true });
      if (due.length === 0) return [];
      const claimed = await tx
        .update(taskContacts)
        .set({
          status: 'dialing',
          attempts: sql`${taskContacts.attempts} + 1`,
          leaseOwner: this.processId,
          leaseUntil: new Date(now + this.leaseMs),
          updatedAt: at,
        })
        .where(
          inArray(
            taskContacts.id,
            due.map((d) => d.id),
          ),
        )
        .returning();

      // Checks made before dialling, inside the lock so two claims cannot both pass the cap.
      const phones = claimed.map((c) => c.phone);
      const blocked = new Set(
        (
          await tx
            .select({ phone: doNotCall.phone })
            .from(doNotCall)
            .where(and(eq(doNotCall.projectId, task.projectId), inArray(doNotCall.phone, phones)))
        ).map((r) => r.phone),
      );
      const overCap = new Set<string>();
      if (settings.dailyCapPerNumber > 0) {
        const used = new Map<string, number>();
        const ended = await tx
          .select({ phone: calls.calleeNumber, n: sql<number>`count(*)::int` })
          .from(calls)
          .where(
            and(
              eq(calls.projectId, task.projectId),
              inArray(calls.calleeNumber, phones),
              gt(calls.startedAt, new Date(chinaDayStart(now) - 1)),
              eq(calls.status, 'ended'),
            ),
          )
          .groupBy(calls.calleeNumber);
        // Live calls are counted through their dialing contacts (their records may not exist yet).
        const dialing = await tx
          .select({ phone: taskContacts.phone, n: sql<number>`count(*)::int` })
          .from(taskContacts)
          .where(
            and(
              eq(taskContacts.projectId, task.projectId),
              inArray(taskContacts.phone, phones),
              eq(taskContacts.status, 'dialing'),
            ),
          )
          .groupBy(taskContacts.phone);
        for (const r of ended) used.set(r.phone, (used.get(r.phone) ?? 0) + r.n);
        // Minus one: the contact's own claim is among the dialing rows.
        for (const r of dialing) used.set(r.phone, (used.get(r.phone) ?? 0) + r.n - 1);
        for (const phone of phones) {
          if ((used.get(phone) ?? 0) >= settings.dailyCapPerNumber) overCap.add(phone);
        }
      }
      const ready: ContactRow[] = [];
      for (const contact of claimed) {
        if (blocked.has(contact.phone)) {
          await tx
            .update(taskContacts)
            .set({
              status: 'skipped',
              skipReason: '免打扰号码',
              attempts: sql`${taskContacts.attempts} - 1`,
              leaseOwner: null,
              leaseUntil: null,
              updatedAt: at,
            })
            .where(eq(taskContacts.id, contact.id));
        } else if (overCap.has(contact.phone)) {
          const tomorrow = firstMomentOfNextDay(settings, now) ?? chinaDayStart(now) + 24 * 3600_000;
          await tx
            .update(taskContacts)
            .set({
              status: contact.attempts > 1 ? 'retry' : 'pending',
              attempts: sql`${taskContacts.attempts} - 1`,
              nextAttemptAt: new Date(tomorrow),
              leaseOwner: null,
              leaseUntil: null,
              updatedAt: at,
            })
            .where(eq(taskContacts.id, contact.id));
        } else {
          ready.push(contact);
        }
      }
      return ready;
    });
    return { contacts, blockedByOthers };
  }

  private launch(task: DialTask, contact: ContactRow): void {
    const attempt = contact.attempts;
    const callId = callIdFor(contact.id, attempt);
    const numbers = task.settings.callerNumbers;
    let callerNumber = this.options.defaultCallerNumber ?? '';
    if (numbers.length) {
      const turn = this.roundRobin.get(task.id) ?? 0;
      this.roundRobin.set(task.id, turn + 1);
      callerNumber = numbers[turn % numbers.length] as string;
    }
    const job: DialJob = {
      task,
      contact: {
        id: contact.id,
        phone: contact.phone,
        name: contact.name,
        variables: (contact.variables as Record<string, string>) ?? {},
      },
      attempt,
      callId,
      callerNumber,
      signal: this.abort.signal,
    };
    const promise = (async () => {
      let endReason: EndReason;
      try {
        endReason = (await this.options.dial(job)).endReason;
      } catch (err) {
        this.options.log?.warn({ err, callId }, 'dial failed');
        endReason = 'failed';
      }
      if (this.killed) return;
      if (this.abort.signal.aborted) {
        // Cut off by our own shutdown, not by the callee: a system interruption, retried by the rules.
        endReason = 'interrupted';
        await this.db
          .update(calls)
          .set({ endReason: 'interrupted', hangupBy: 'system' })
          .where(eq(calls.id, callId));
      }
      await this.io(this.finish(task, contact.id, attempt, callId, endReason));
    })()
      .catch((err) => this.options.log?.warn({ err, callId }, 'dialer could not record a call end'))
      .finally(() => {
        this.live.delete(contact.id);
        if (!this.killed) this.wake();
      });
    this.live.set(contact.id, { taskId: task.id, projectId: task.projectId, promise });
    this.peakLive = Math.max(this.peakLive, this.live.size);
  }

  /** Applies a call's outcome to its contact; only while this dialer still holds the lease. */
  private async finish(
    task: DialTask,
    contactId: string,
    attempt: number,
    callId: string,
    endReason: EndReason,
  ): Promise<void> {
    const now = this.clock.now();
    const outcome = contactOutcome(task.settings, endReason, attempt, now, this.options.retryTimeScale);
    await this.db
      .update(taskContacts)
      .set({
        status: outcome.status,
        nextAttemptAt: outcome.nextAttemptAt,
        leaseOwner: null,
        leaseUntil: null,
        lastCallId: callId,
        lastEndReason: endReason,
        updatedAt: new Date(now),
      })
      .where(
        and(
          eq(taskContacts.id, contactId),
          eq(taskContacts.status, 'dialing'),
          eq(taskContacts.leaseOwner, this.processId),
          eq(taskContacts.attempts, attempt),
        ),
      );
    if (!(await this.hasOpenContacts(task.id))) await this.complete(task, now, false);
    this.options.onTaskChanged?.(task.projectId, task.id);
  }

  /** Heartbeat: extends the leases of this process's live calls every leaseMs / 3. */
  private async renewLeases(now: number): Promise<void> {
    if (this.live.size === 0 || now - this.lastRenew < this.leaseMs / 3) return;
    this.lastRenew = now;
    await this.db
      .update(taskContacts)
      .set({ leaseUntil: new Date(now + this.leaseMs) })
      .where(
        and(
          eq(taskContacts.status, 'dialing'),
          eq(taskContacts.leaseOwner, this.processId),
          inArray(taskContacts.id, [...this.live.keys()]),
        ),
      );
  }

  /**
   * Contacts left dialing by a process that died: a call never created gives its attempt back; a
   * call cut off mid-way is closed as interrupted (系统中断) and retried by the rules; a call that
   * ended before the crash keeps its outcome.
   */
  private async recoverLeases(now: number, allForeign: boolean): Promise<void> {
    const at = new Date(now);
    const expired = await this.db
      .select()
      .from(taskContacts)
      .where(
        and(
          eq(taskContacts.status, 'dialing'),
          allForeign
            ? or(isNull(taskContacts.leaseOwner), ne(taskContacts.leaseOwner, this.processId))
            : lt(taskContacts.leaseUntil, at),
        ),
      )
      .limit(500);
    const owns = this.options.ownsTask;
    const stale = expired.filter((c) => !this.live.has(c.id) && (!owns || owns(c.taskId)));
    if (stale.length === 0) return;
    const callIds = stale.map((c) => callIdFor(c.id, c.attempts));
    const found = new Map(
      (
        await this.db
          .select({ id: calls.id, status: calls.status, endReason: calls.endReason })
          .from(calls)
          .where(inArray(calls.id, callIds))
      ).map((c) => [c.id, c]),
    );
    const settingsOf = new Map<string, TaskSettings>();
    const taskRows = await this.db
      .select({ id: callTasks.id, settings: callTasks.settings, projectId: callTasks.projectId })
      .from(callTasks)
      .where(inArray(callTasks.id, [...new Set(stale.map((c) => c.taskId))]));
    for (const t of taskRows) settingsOf.set(t.id, t.settings as TaskSettings);
    const touched = new Map<string, string>();
    for (const contact of stale) {
      // Only the process that wins this guard recovers the contact.
      const guard = and(
        eq(taskContacts.id, contact.id),
        eq(taskContacts.status, 'dialing'),
        eq(taskContacts.attempts, contact.attempts),
        contact.leaseOwner === null
          ? isNull(taskContacts.leaseOwner)
          : eq(taskContacts.leaseOwner, contact.leaseOwner),
      );
      const callId = callIdFor(contact.id, contact.attempts);
      const call = found.get(callId);
      let result: { id: string }[];
      if (!call) {
        result = await this.db
          .update(taskContacts)
          .set({
            status: contact.attempts > 1 ? 'retry' : 'pending',
            attempts: sql`${taskContacts.attempts} - 1`,
            leaseOwner: null,
            leaseUntil: null,
            updatedAt: at,
          })
          .where(guard)
          .returning({ id: taskContacts.id });
      } else {
        let endReason = (call.endReason ?? 'interrupted') as EndReason;
        if (call.status !== 'ended') {
          endReason = 'interrupted';
          await this.db
            .update(calls)
            .set({ status: 'ended', endReason: 'interrupted', hangupBy: 'system', endedAt: at })
            .where(and(eq(calls.id, callId), ne(calls.status, 'ended')));
        }
        const settings = settingsOf.get(contact.taskId);
        const outcome = settings
          ? contactOutcome(settings, endReason, contact.attempts, now, this.options.retryTimeScale)
          : { status: 'failed' as const, nextAttemptAt: null };
        result = await this.db
          .update(taskContacts)
          .set({
            status: outcome.status,
            nextAttemptAt: outcome.nextAttemptAt,
            leaseOwner: null,
            leaseUntil: null,
            lastCallId: callId,
            lastEndReason: endReason,
            updatedAt: at,
          })
          .where(guard)
          .returning({ id: taskContacts.id });
      }
      if (result.length) touched.set(contact.taskId, contact.projectId);
    }
    if (touched.size) {
      this.options.log?.warn({ contacts: stale.length }, 'dialer recovered contacts of a lost process');
      for (const [taskId, projectId] of touched) this.options.onTaskChanged?.(projectId, taskId);
    }
  }
}
