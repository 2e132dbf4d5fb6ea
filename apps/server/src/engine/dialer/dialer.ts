import { setMaxListeners } from 'node:events';
import type { EndReason } from '@callpilot/contracts';
import type { Clock } from '../clock';
import { persistently } from '../retry';
import { pastEndDate } from './calendar';
import {
  CallerNumberRotation,
  callIdFor,
  callingWindow,
  contactOutcome,
  dailyCapOf,
  startWaitsUntil,
} from './policy';
import type {
  ClaimedContact,
  ContactLease,
  DialerLog,
  DialerStore,
  DialJob,
  DialResult,
  DialTask,
} from './ports';
import { recoverLostContacts } from './recovery';

// Other code imported these from here before the dialer was split; they stay importable from here.
export { callIdFor, contactOutcome, maxAttemptsOf } from './policy';
export type { DialContact, DialerLog, DialJob, DialResult, DialTask } from './ports';

export interface DialerOptions {
  /** Tasks, contacts and leases (the database, in the server). */
  store: DialerStore;
  clock: Clock;
  /** Unique per process (and per Dialer): leases name their owner. */
  processId: string;
  /**
   * Places one call; resolves when it ended (the hang-up; work after it may follow in
   * `DialResult.afterCall`). Must create the call record with `job.callId`, and
   * record it as interrupted when `job.signal` cuts it off.
   */
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

interface LiveCall {
  taskId: string;
  projectId: string;
  promise: Promise<void>;
}

/**
 * The outbound dialer of one process. Each tick it recovers lost leases, moves tasks between
 * states by the calendar, claims due contacts through the store (exclusive across processes, so
 * several processes on one PostgreSQL never exceed a cap or dial a contact twice) and starts their
 * calls in the background. The claim counts the attempt before any call starts, so a crash at any
 * point can never give a contact more calls than its rules allow.
 */
export class Dialer {
  private readonly store: DialerStore;
  private readonly clock: Clock;
  readonly processId: string;
  private readonly leaseMs: number;
  private readonly tickMs: number;
  private readonly maxIdleMs: number;
  private readonly processCap: number;
  private readonly defaultProjectCap: number;
  private readonly live = new Map<string, LiveCall>();
  /** Post-call work of calls whose slot is already free, by task: their task completes after it. */
  private readonly trailing = new Map<string, Set<Promise<unknown>>>();
  private readonly callerNumbers: CallerNumberRotation;
  private readonly abort = new AbortController();
  private sleeper: AbortController | null = null;
  private woken = false;
  private loop: Promise<void> | null = null;
  private stopping = false;
  private killed = false;
  private lastRenew = 0;
  private startedRecovery = false;
  /** Highest number of calls this dialer had live at once (tests and the bench read it). */
  peakLive = 0;

  constructor(private readonly options: DialerOptions) {
    // Every live call waits on this one shutdown signal: hundreds of listeners are expected, not a leak.
    setMaxListeners(0, this.abort.signal);
    this.store = options.store;
    this.clock = options.clock;
    this.processId = options.processId;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.tickMs = options.tickMs ?? 1000;
    this.maxIdleMs = options.maxIdleMs ?? 30_000;
    this.processCap = options.maxProcessConcurrency ?? 500;
    this.defaultProjectCap = options.defaultProjectCap ?? 200;
    this.callerNumbers = new CallerNumberRotation(options.defaultCallerNumber ?? '');
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
    const all = () =>
      Promise.allSettled([...[...this.live.values()].map((c) => c.promise), ...this.trailingOf()]);
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

  /** Resolves when this dialer has no live call and their post-call work is done. */
  async idle(): Promise<void> {
    while (this.live.size || this.trailing.size) {
      await Promise.allSettled([...[...this.live.values()].map((c) => c.promise), ...this.trailingOf()]);
    }
  }

  private trailingOf(taskId?: string): Promise<unknown>[] {
    if (taskId !== undefined) return [...(this.trailing.get(taskId) ?? [])];
    return [...this.trailing.values()].flatMap((set) => [...set]);
  }

  /** Keeps a call's post-call work until it settles, so its task does not complete before it. */
  private trail(taskId: string, work: Promise<unknown>): void {
    let set = this.trailing.get(taskId);
    if (!set) {
      set = new Set();
      this.trailing.set(taskId, set);
    }
    const entry: Promise<unknown> = work
      .catch((err) => this.options.log?.warn({ err, taskId }, 'work after a call failed'))
      .finally(() => {
        set.delete(entry);
        if (set.size === 0 && this.trailing.get(taskId) === set) this.trailing.delete(taskId);
      });
    set.add(entry);
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
      if (this.options.recoverForeignLeasesAtStart) await this.recover(now, true);
    }
    await this.renewLeases(now);
    await this.recover(now, false);
    const { tasks, pendingWakeAt } = await this.activeTasks(now);
    let wakeAt = Math.min(now + this.maxIdleMs, pendingWakeAt);
    let pollSoon = false;
    const caps = new Map<string, number>();
    for (const task of tasks) {
      if (this.stopping) break;
      const window = callingWindow(task.settings, now);
      if (!window.open) {
        if (window.opensAt !== null) wakeAt = Math.min(wakeAt, window.opensAt);
        continue;
      }
      const free = this.processCap - this.live.size;
      if (free <= 0) break;
      let cap = caps.get(task.projectId);
      if (cap === undefined) {
        cap = (await this.store.projectCallCap(task.projectId)) ?? this.defaultProjectCap;
        caps.set(task.projectId, cap);
      }
      const claim = await this.claim(task, now, Math.min(free, task.settings.concurrency), cap);
      // Slots held by other processes free up without waking us: poll while they block us.
      if (claim.blockedByOthers) pollSoon = true;
      for (const contact of claim.contacts) this.launch(task, contact);
      if (claim.contacts.length) this.options.onTaskChanged?.(task.projectId, task.id);
      else if (this.liveCallsOf(task.id) === 0 && !(await this.store.hasOpenContacts(task.id))) {
        // Its last contacts were finished by another process, or by recovery.
        await this.complete(task, now, false);
      }
    }
    if (pollSoon) return this.tickMs;
    if (
      tasks.length === 0 &&
      this.live.size === 0 &&
      pendingWakeAt === Number.POSITIVE_INFINITY &&
      !(await this.store.hasDialingContacts())
    ) {
      return Number.POSITIVE_INFINITY;
    }
    // Calls ending wake the loop; otherwise sleep until the next retry, lease expiry, renewal or window.
    if (this.live.size > 0) wakeAt = Math.min(wakeAt, this.lastRenew + this.leaseMs / 3);
    const next = await this.store.nextWakeUps(new Date(now));
    if (next.retryAt) wakeAt = Math.min(wakeAt, next.retryAt.getTime());
    // Recovery needs lease_until < now: one millisecond past it.
    if (next.leaseExpiresAt) wakeAt = Math.min(wakeAt, next.leaseExpiresAt.getTime() + 1);
    return Math.max(1, wakeAt - now);
  }

  /**
   * Running tasks, after moving pending ones whose start arrived and finishing exhausted ones;
   * `pendingWakeAt` is the earliest start of a task still waiting for its start date.
   */
  private async activeTasks(now: number): Promise<{ tasks: DialTask[]; pendingWakeAt: number }> {
    const owns = this.options.ownsTask;
    const open = (await this.store.openTasks()).filter((task) => !owns || owns(task.id));
    const tasks: DialTask[] = [];
    let pendingWakeAt = Number.POSITIVE_INFINITY;
    for (const { state, ...task } of open) {
      if (state === 'pending') {
        const startsAt = startWaitsUntil(task.settings, now);
        if (startsAt !== null) {
          pendingWakeAt = Math.min(pendingWakeAt, startsAt);
          continue;
        }
        await this.store.startTask(task.id, new Date(now));
        this.options.onTaskChanged?.(task.projectId, task.id);
      }
      if (pastEndDate(task.settings, now)) {
        await this.complete(task, now, true);
        continue;
      }
      if (task.noCallerNumber) continue;
      tasks.push(task);
    }
    return { tasks, pendingWakeAt };
  }

  /** running → completed (all contacts final, or the end date passed with calls none live). */
  private async complete(task: DialTask, now: number, endDatePassed: boolean): Promise<void> {
    if (endDatePassed && (await this.store.hasDialingContacts(task.id))) return;
    // 已完成 means every call of it is fully written (analysis, recording queued), as before the
    // slots were freed at the hang-up.
    const trailing = this.trailingOf(task.id);
    if (trailing.length > 0) await Promise.allSettled(trailing);
    const at = trailing.length > 0 ? this.clock.now() : now;
    if (await this.store.completeTask(task.id, new Date(at))) {
      this.options.onTaskChanged?.(task.projectId, task.id);
    }
  }

  private async claim(
    task: DialTask,
    now: number,
    want: number,
    projectCap: number,
  ): Promise<{ contacts: ClaimedContact[]; blockedByOthers: boolean }> {
    const claim = await this.store.claimDueContacts({
      taskId: task.id,
      projectId: task.projectId,
      want,
      taskConcurrency: task.settings.concurrency,
      projectCap,
      owner: this.processId,
      leaseUntil: new Date(now + this.leaseMs),
      at: new Date(now),
      dailyCap: dailyCapOf(task.settings, now),
    });
    let own = 0;
    for (const call of this.live.values()) if (call.projectId === task.projectId) own++;
    return { contacts: claim.contacts, blockedByOthers: claim.capped && claim.projectDialing > own };
  }

  private launch(task: DialTask, contact: ClaimedContact): void {
    const { attempt, ...person } = contact;
    const callId = callIdFor(contact.id, attempt);
    const job: DialJob = {
      task,
      contact: person,
      attempt,
      callId,
      callerNumber: this.callerNumbers.next(task),
      signal: this.abort.signal,
    };
    const lease: ContactLease = { contactId: contact.id, attempt, owner: this.processId };
    const promise = (async () => {
      let endReason: EndReason;
      try {
        const result = await this.options.dial(job);
        endReason = result.endReason;
        if (result.afterCall) this.trail(task.id, result.afterCall);
      } catch (err) {
        // placeCall settles what goes wrong on the call itself; what escapes it is the system
        // failing (its record could not be written): an interruption, retried by the rules.
        this.options.log?.warn({ err, callId }, 'dial failed');
        endReason = 'interrupted';
      }
      if (this.killed) return;
      // Cut off by our own shutdown, not by the callee: a system interruption, retried by the rules.
      // The call records itself as interrupted; this only decides what becomes of the contact.
      if (this.abort.signal.aborted) endReason = 'interrupted';
      await this.io(this.finish(task, lease, callId, endReason));
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
    lease: ContactLease,
    callId: string,
    endReason: EndReason,
  ): Promise<void> {
    const now = this.clock.now();
    const outcome = contactOutcome(task.settings, endReason, lease.attempt, now, this.options.retryTimeScale);
    // Lost, the outcome would leave the contact to crash recovery, which would dial it again.
    await persistently(() => this.store.settleContact(lease, { outcome, callId, endReason }, new Date(now)));
    if (!(await this.store.hasOpenContacts(task.id))) await this.complete(task, now, false);
    this.options.onTaskChanged?.(task.projectId, task.id);
  }

  /** Heartbeat: extends the leases of this process's live calls every leaseMs / 3. */
  private async renewLeases(now: number): Promise<void> {
    if (this.live.size === 0 || now - this.lastRenew < this.leaseMs / 3) return;
    this.lastRenew = now;
    await this.store.renewLeases(this.processId, [...this.live.keys()], new Date(now + this.leaseMs));
  }

  private recover(now: number, foreign: boolean): Promise<void> {
    return recoverLostContacts(
      {
        store: this.store,
        processId: this.processId,
        now,
        isLive: (contactId) => this.live.has(contactId),
        ownsTask: this.options.ownsTask,
        retryTimeScale: this.options.retryTimeScale,
        log: this.options.log,
        onTaskChanged: this.options.onTaskChanged,
      },
      foreign,
    );
  }
}
