import type { EndReason, TaskSettings } from '@callpilot/contracts';
import { and, asc, eq, gt, inArray, isNull, lt, lte, min, ne, or, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { calls, callTasks, doNotCall, projectLimits, taskContacts } from '../../db/schema';
import type {
  ClaimedContact,
  ClaimRequest,
  ContactLease,
  DailyCap,
  DialerStore,
  LostContact,
} from '../../engine/dialer/ports';
import { usableCallerNumbers } from '../numbers/numbers.service';
import { publishTaskStateChange } from '../webhooks/event-sources';

/**
 * Closes calls a lost process left live: the dialer's only write to `calls`, made by the table's
 * one writer (the call repository), which applies its one orphan rule and announces each close.
 */
export interface LiveCallInterrupter {
  /** Ends those of `callIds` whose process is gone as interrupted (系统中断); answers the ids it closed. */
  interruptLive(callIds: string[], at: Date): Promise<string[]>;
}

export interface DialerStoreOptions {
  calls: LiveCallInterrupter;
}

const DO_NOT_CALL_SKIP_REASON = '免打扰号码';

/** Contact columns that release a lease. */
const released = { leaseOwner: null, leaseUntil: null } as const;

/** A claim undone: the attempt is not counted and the contact is due as it was before. */
const attemptGivenBack = (attempt: number, at: Date) => ({
  status: attempt > 1 ? ('retry' as const) : ('pending' as const),
  attempts: sql`${taskContacts.attempts} - 1`,
  ...released,
  updatedAt: at,
});

/** The lease guard: the contact is still dialing this attempt under this owner. */
const heldBy = (lease: ContactLease): SQL | undefined =>
  and(
    eq(taskContacts.id, lease.contactId),
    eq(taskContacts.status, 'dialing'),
    eq(taskContacts.attempts, lease.attempt),
    lease.owner === null ? isNull(taskContacts.leaseOwner) : eq(taskContacts.leaseOwner, lease.owner),
  );

/** The dialer's tasks, contacts and leases on the database (PGlite or PostgreSQL). */
export function createDialerStore(db: Database, options: DialerStoreOptions): DialerStore {
  const callWriter = options.calls;

  const exists = async (where: SQL | undefined) => {
    const [row] = await db.select({ id: taskContacts.id }).from(taskContacts).where(where).limit(1);
    return row !== undefined;
  };

  return {
    async openTasks() {
      const rows = await db
        .select()
        .from(callTasks)
        .where(and(inArray(callTasks.state, ['pending', 'running']), isNull(callTasks.deletedAt)))
        .orderBy(asc(callTasks.startedAt));
      const usable = await usableCallerNumbers(db, [...new Set(rows.map((r) => r.projectId))]);
      return rows.map((row) => {
        const settings = row.settings as TaskSettings;
        const numbers = usable.get(row.projectId) ?? new Set<string>();
        // Resting or disabled numbers drop out of the rotation at once; the others carry the calls.
        const callerNumbers = settings.callerNumbers.filter((n) => numbers.has(n));
        return {
          id: row.id,
          projectId: row.projectId,
          name: row.name,
          assistantId: row.assistantId,
          assistantVersion: row.assistantVersion,
          settings: { ...settings, callerNumbers },
          state: row.state as 'pending' | 'running',
          noCallerNumber: settings.callerNumbers.length > 0 && callerNumbers.length === 0,
        };
      });
    },

    async startTask(taskId, at) {
      const moved = await db
        .update(callTasks)
        .set({ state: 'running' })
        .where(and(eq(callTasks.id, taskId), eq(callTasks.state, 'pending')))
        .returning({ projectId: callTasks.projectId });
      // Its start date came: the task moves on by itself, and receivers hear it as they would a click.
      for (const { projectId } of moved)
        await publishTaskStateChange(db, projectId, taskId, { from: 'pending', to: 'running' }, at);
    },

    async completeTask(taskId, at) {
      const moved = await db
        .update(callTasks)
        .set({ state: 'completed', finishedAt: at })
        .where(and(eq(callTasks.id, taskId), eq(callTasks.state, 'running')))
        .returning({ projectId: callTasks.projectId });
      for (const { projectId } of moved)
        await publishTaskStateChange(db, projectId, taskId, { from: 'running', to: 'completed' }, at);
      return moved.length > 0;
    },

    async projectCallCap(projectId) {
      const [limits] = await db
        .select({ hasBalance: projectLimits.hasBalance, concurrentCallout: projectLimits.concurrentCallout })
        .from(projectLimits)
        .where(eq(projectLimits.projectId, projectId))
        .limit(1);
      return limits?.hasBalance ? limits.concurrentCallout : null;
    },

    claimDueContacts: (request) => claimDueContacts(db, request),

    async renewLeases(owner, contactIds, until) {
      await db
        .update(taskContacts)
        .set({ leaseUntil: until })
        .where(
          and(
            eq(taskContacts.status, 'dialing'),
            eq(taskContacts.leaseOwner, owner),
            inArray(taskContacts.id, contactIds),
          ),
        );
    },

    async settleContact(lease, settlement, at) {
      const rows = await db
        .update(taskContacts)
        .set({
          status: settlement.outcome.status,
          nextAttemptAt: settlement.outcome.nextAttemptAt,
          ...released,
          lastCallId: settlement.callId,
          lastEndReason: settlement.endReason,
          updatedAt: at,
        })
        .where(heldBy(lease))
        .returning({ id: taskContacts.id });
      return rows.length > 0;
    },

    async giveBackAttempt(lease, at) {
      const rows = await db
        .update(taskContacts)
        .set(attemptGivenBack(lease.attempt, at))
        .where(heldBy(lease))
        .returning({ id: taskContacts.id });
      return rows.length > 0;
    },

    async lostContacts(which): Promise<LostContact[]> {
      // Every tick asks and the answer is nearly always none: no join, the lease index alone.
      const rows = await db
        .select({
          contactId: taskContacts.id,
          attempt: taskContacts.attempts,
          owner: taskContacts.leaseOwner,
          taskId: taskContacts.taskId,
          projectId: taskContacts.projectId,
        })
        .from(taskContacts)
        .where(
          and(
            eq(taskContacts.status, 'dialing'),
            'notOwnedBy' in which
              ? or(isNull(taskContacts.leaseOwner), ne(taskContacts.leaseOwner, which.notOwnedBy))
              : lt(taskContacts.leaseUntil, which.expiredBefore),
          ),
        )
        .limit(500);
      if (rows.length === 0) return [];
      const tasks = await db
        .select({ id: callTasks.id, settings: callTasks.settings })
        .from(callTasks)
        .where(inArray(callTasks.id, [...new Set(rows.map((r) => r.taskId))]));
      const settingsOf = new Map(tasks.map((t) => [t.id, t.settings as TaskSettings]));
      return rows.map((row) => ({ ...row, settings: settingsOf.get(row.taskId) ?? null }));
    },

    async attemptCalls(callIds) {
      if (callIds.length === 0) return [];
      const rows = await db
        .select({ id: calls.id, status: calls.status, endReason: calls.endReason })
        .from(calls)
        .where(inArray(calls.id, callIds));
      return rows.map((c) => ({
        id: c.id,
        ended: c.status === 'ended',
        endReason: c.endReason as EndReason | null,
      }));
    },

    closeCutOffCalls: (callIds, at) => callWriter.interruptLive(callIds, at),

    hasOpenContacts: (taskId) =>
      exists(
        and(eq(taskContacts.taskId, taskId), inArray(taskContacts.status, ['pending', 'retry', 'dialing'])),
      ),

    hasDialingContacts: (taskId) =>
      exists(
        taskId === undefined
          ? eq(taskContacts.status, 'dialing')
          : and(eq(taskContacts.taskId, taskId), eq(taskContacts.status, 'dialing')),
      ),

    async nextWakeUps(after) {
      const [next] = await db
        .select({ retry: min(taskContacts.nextAttemptAt) })
        .from(taskContacts)
        .innerJoin(callTasks, eq(callTasks.id, taskContacts.taskId))
        .where(
          and(
            eq(callTasks.state, 'running'),
            inArray(taskContacts.status, ['pending', 'retry']),
            gt(taskContacts.nextAttemptAt, after),
          ),
        );
      const [lease] = await db
        .select({ until: min(taskContacts.leaseUntil) })
        .from(taskContacts)
        .where(eq(taskContacts.status, 'dialing'));
      // Aggregates may come back as strings from some drivers.
      return {
        retryAt: next?.retry ? new Date(next.retry) : null,
        leaseExpiresAt: lease?.until ? new Date(lease.until) : null,
      };
    },
  };
}

/**
 * One claim in one transaction. The project's advisory lock serialises claims of one project
 * across processes, so the dialing counts read here are exact and the caps hold; SKIP LOCKED keeps
 * claims of other tasks from waiting on each other.
 */
async function claimDueContacts(db: Database, request: ClaimRequest) {
  const { taskId, projectId, want, at, dailyCap } = request;
  let projectDialing = 0;
  let capped = false;
  const contacts = await db.transaction(async (tx): Promise<ClaimedContact[]> => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`dial:${projectId}`}))`);
    const [counts] = await tx
      .select({
        project: sql<number>`count(*)::int`,
        task: sql<number>`(count(*) filter (where ${taskContacts.taskId} = ${taskId}))::int`,
      })
      .from(taskContacts)
      .where(and(eq(taskContacts.projectId, projectId), eq(taskContacts.status, 'dialing')));
    projectDialing = (counts?.project ?? 0) + (await liveCallsWithoutTask(tx, projectId));
    const n = Math.min(
      want,
      request.taskConcurrency - (counts?.task ?? 0),
      request.projectCap - projectDialing,
    );
    capped = n < want;
    if (n <= 0) return [];
    const due = await tx
      .select({ id: taskContacts.id })
      .from(taskContacts)
      .where(
        and(
          eq(taskContacts.taskId, taskId),
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
        leaseOwner: request.owner,
        leaseUntil: request.leaseUntil,
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
    const blocked = await onDoNotCallList(tx, projectId, phones);
    const overCap = dailyCap ? await overDailyCap(tx, projectId, phones, dailyCap) : new Set<string>();
    const ready: ClaimedContact[] = [];
    for (const contact of claimed) {
      if (blocked.has(contact.phone)) {
        await tx
          .update(taskContacts)
          .set({
            status: 'skipped',
            skipReason: DO_NOT_CALL_SKIP_REASON,
            attempts: sql`${taskContacts.attempts} - 1`,
            ...released,
            updatedAt: at,
          })
          .where(eq(taskContacts.id, contact.id));
      } else if (dailyCap && overCap.has(contact.phone)) {
        await tx
          .update(taskContacts)
          .set({ ...attemptGivenBack(contact.attempts, at), nextAttemptAt: dailyCap.deferUntil })
          .where(eq(taskContacts.id, contact.id));
      } else {
        ready.push({
          id: contact.id,
          phone: contact.phone,
          name: contact.name,
          variables: (contact.variables as Record<string, string>) ?? {},
          attempt: contact.attempts,
        });
      }
    }
    return ready;
  });
  return { contacts, projectDialing, capped };
}

type Transaction = Parameters<Parameters<Database['transaction']>[0]>[0];

/**
 * Outbound calls of the project that hold a line without a task's contact: single calls of the
 * open API (and the console's test calls). They share the project's concurrency with the tasks:
 * the claims count them, and the open API checks the same sum before it places a call.
 */
export async function liveCallsWithoutTask(tx: Database | Transaction, projectId: string): Promise<number> {
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(calls)
    .where(
      and(
        eq(calls.projectId, projectId),
        eq(calls.direction, 'outbound'),
        ne(calls.status, 'ended'),
        isNull(calls.taskId),
      ),
    );
  return row?.n ?? 0;
}

/** Calls of the project's tasks being dialled now: claimed contacts hold their slot from the claim. */
export async function dialingContacts(tx: Database | Transaction, projectId: string): Promise<number> {
  const [row] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(taskContacts)
    .where(and(eq(taskContacts.projectId, projectId), eq(taskContacts.status, 'dialing')));
  return row?.n ?? 0;
}

async function onDoNotCallList(tx: Transaction, projectId: string, phones: string[]): Promise<Set<string>> {
  const rows = await tx
    .select({ phone: doNotCall.phone })
    .from(doNotCall)
    .where(and(eq(doNotCall.projectId, projectId), inArray(doNotCall.phone, phones)));
  return new Set(rows.map((r) => r.phone));
}

/** The numbers among `phones` that already had their calls today, across the project. */
async function overDailyCap(
  tx: Transaction,
  projectId: string,
  phones: string[],
  cap: DailyCap,
): Promise<Set<string>> {
  const used = new Map<string, number>();
  const ended = await tx
    .select({ phone: calls.calleeNumber, n: sql<number>`count(*)::int` })
    .from(calls)
    .where(
      and(
        eq(calls.projectId, projectId),
        inArray(calls.calleeNumber, phones),
        gt(calls.startedAt, new Date(cap.since.getTime() - 1)),
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
        eq(taskContacts.projectId, projectId),
        inArray(taskContacts.phone, phones),
        eq(taskContacts.status, 'dialing'),
      ),
    )
    .groupBy(taskContacts.phone);
  for (const r of ended) used.set(r.phone, (used.get(r.phone) ?? 0) + r.n);
  // Minus one: the contact's own claim is among the dialing rows.
  for (const r of dialing) used.set(r.phone, (used.get(r.phone) ?? 0) + r.n - 1);
  return new Set(phones.filter((phone) => (used.get(phone) ?? 0) >= cap.perNumber));
}
