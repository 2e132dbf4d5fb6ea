import type { EndReason, TaskSettings } from '@callpilot/contracts';

/** What the dialer knows of a task while it dials. */
export interface DialTask {
  id: string;
  projectId: string;
  name: string;
  assistantId: string | null;
  assistantVersion: number | null;
  settings: TaskSettings;
}

/** A task the dialer looks after: 待开始 (pending) until its start date, then 进行中 (running). */
export interface OpenTask extends DialTask {
  state: 'pending' | 'running';
  /**
   * Every caller number the task chose is disabled, resting or gone: it places no call until one
   * is back (its `settings.callerNumbers` already lists only the usable ones).
   */
  noCallerNumber?: boolean;
}

export interface DialContact {
  id: string;
  phone: string;
  name: string;
  variables: Record<string, string>;
}

/** A contact claimed for a call: `attempt` already counts the call about to be made. */
export interface ClaimedContact extends DialContact {
  attempt: number;
}

export interface DialJob {
  task: DialTask;
  contact: DialContact;
  /** 1-based: this call is the contact's n-th attempt. */
  attempt: number;
  /** `${contactId}.${attempt}`: the call record MUST get exactly this id (crash recovery looks for it). */
  callId: string;
  callerNumber: string;
  /**
   * Aborted when the dialer shuts down with calls still live; the call then records itself as
   * interrupted (the dialer writes no call records).
   */
  signal: AbortSignal;
}

export interface DialResult {
  callId: string;
  endReason: EndReason;
  /**
   * The call's work after the hang-up (analysis, actions, the recording's queueing), when `dial`
   * resolved at the hang-up without waiting for it: the contact's slot is reused meanwhile, and
   * its task completes only once this settled.
   */
  afterCall?: Promise<unknown>;
}

/** What a contact becomes after an attempt. */
export interface ContactOutcome {
  status: 'done' | 'retry' | 'failed';
  nextAttemptAt: Date | null;
}

/**
 * One attempt's hold on a contact. Writes made through it apply only while the contact is still
 * dialing that attempt under that owner, so of two processes racing for a contact one wins.
 */
export interface ContactLease {
  contactId: string;
  attempt: number;
  /** The process holding the lease; null for a lease without an owner. */
  owner: string | null;
}

/** A contact left dialing by a process that is gone, or whose lease expired. */
export interface LostContact extends ContactLease {
  taskId: string;
  projectId: string;
  /** Its task's settings; null when the task no longer exists. */
  settings: TaskSettings | null;
}

/** The call record of an attempt, as far as recovery needs it. */
export interface AttemptCall {
  id: string;
  ended: boolean;
  endReason: EndReason | null;
}

/** The per-number daily cap as one claim applies it. */
export interface DailyCap {
  /** Calls per number per China-time day, across the project's tasks. */
  perNumber: number;
  /** Calls started from this instant on count (the China-time day's start). */
  since: Date;
  /** When a contact over the cap is due again (the next day's first calling moment). */
  deferUntil: Date;
}

export interface ClaimRequest {
  taskId: string;
  projectId: string;
  /** Calls this process has room for. */
  want: number;
  taskConcurrency: number;
  projectCap: number;
  owner: string;
  leaseUntil: Date;
  at: Date;
  /** Null: no cap. */
  dailyCap: DailyCap | null;
}

export interface Claim {
  /** Ready to dial: do-not-call and over-cap contacts were already put aside. */
  contacts: ClaimedContact[];
  /** The project's dialing contacts (all processes) when the claim began. */
  projectDialing: number;
  /** The task's or the project's concurrency allowed fewer than `want`. */
  capped: boolean;
}

/** The attempt's end as written onto its contact. */
export interface Settlement {
  outcome: ContactOutcome;
  callId: string;
  endReason: EndReason;
}

/**
 * Everything the dialer reads and writes outside itself: tasks, their contacts and leases, the
 * project's limits, and the closing of calls cut off by a lost process. Implementations must make
 * claims exclusive across processes sharing the store.
 */
export interface DialerStore {
  /** 待开始 and 进行中 tasks that are not deleted, earliest started first. */
  openTasks(): Promise<OpenTask[]>;
  /** 待开始 → 进行中, unless the task has moved on meanwhile. */
  startTask(taskId: string, at: Date): Promise<void>;
  /** 进行中 → 已完成; false when the task was no longer running. */
  completeTask(taskId: string, at: Date): Promise<boolean>;
  /** The project's concurrent outbound calls; null for an unmetered project (no balance limits). */
  projectCallCap(projectId: string): Promise<number | null>;
  /**
   * Claims up to `want` due contacts of a task for `owner`, atomically with respect to every other
   * claim of the project: the task's and the project's dialing counts hold within their caps, a
   * contact is claimed by one owner only, and `attempt` is counted in the claim itself. Contacts on
   * the do-not-call list are skipped and over the daily cap deferred, both without using an attempt.
   */
  claimDueContacts(request: ClaimRequest): Promise<Claim>;
  /** Extends the leases `owner` holds on these contacts. */
  renewLeases(owner: string, contactIds: string[], until: Date): Promise<void>;
  /** Writes the attempt's end onto its contact and releases it; false when the lease was not held. */
  settleContact(lease: ContactLease, settlement: Settlement, at: Date): Promise<boolean>;
  /** Undoes a claim whose call never started: the attempt is not counted; false when not held. */
  giveBackAttempt(lease: ContactLease, at: Date): Promise<boolean>;
  /** Dialing contacts whose lease expired before `expiredBefore`, or that `notOwnedBy` does not hold. */
  lostContacts(which: { expiredBefore: Date } | { notOwnedBy: string }): Promise<LostContact[]>;
  /** The call records among these ids. */
  attemptCalls(callIds: string[]): Promise<AttemptCall[]>;
  /**
   * Ends these calls as interrupted by the system (系统中断) where the call repository's one rule
   * says their process is gone; answers the ids it closed. A call some process still runs stays.
   */
  closeCutOffCalls(callIds: string[], at: Date): Promise<string[]>;
  /** Whether the task has a contact still to call or being called. */
  hasOpenContacts(taskId: string): Promise<boolean>;
  /** Whether a contact is being called: of this task, or of any task. */
  hasDialingContacts(taskId?: string): Promise<boolean>;
  /** The earliest retry of a running task due after `after`, and the earliest lease expiry. */
  nextWakeUps(after: Date): Promise<{ retryAt: Date | null; leaseExpiresAt: Date | null }>;
}

export interface DialerLog {
  warn(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
}
