import type { CallDetail, CallTurn, FlowStep, IntentGrade } from '@callpilot/contracts';
import { and, desc, eq, inArray, isNull, lt, ne, or, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { callStatsDirty, calls, callTurns } from '../../db/schema';
import type { CallAnalysisRecord, CallEnd, CallRecorder, NewCallRecord } from '../../engine/call/ports';
import { badRequest } from '../../lib/errors';
import type { CallWebhooks } from '../webhooks/event-sources';
import type { CallEventHub } from './call-events';
import { type CallRow, findCall, getCallDetail, toSummary } from './calls.service';

/** How long a live call's claim holds without renewal; the registry renews every third of it. */
export const CALL_LEASE_MS = 30_000;
const HOUR_MS = 3_600_000;

export interface CallRepositoryOptions {
  /** This process: it owns the leases of the calls it runs. */
  owner: string;
  /**
   * The embedded database serves one process, so a live call owned by anyone else was left by a
   * process that is gone, whatever its lease says.
   */
  singleProcess: boolean;
  /**
   * The call events of webhooks (modules/webhooks/event-sources.ts), enqueued after each write
   * and awaited, so an event is in the outbox before the call moves on. None: no events.
   */
  webhooks?: CallWebhooks;
  /** Told after a call's hour was marked for the report rollups (the rollup worker's wake-up). */
  onStatsDirty?: () => void;
}

/**
 * The one writer of `calls` and `call_turns`. Every write returns its row and is announced on the
 * hub (relayed to other processes), so the list, the detail page and later webhooks follow every
 * change: the engine's progress, grades, tags, recordings and crash closes alike.
 */
export class CallRepository implements CallRecorder {
  constructor(
    private readonly db: Database,
    private readonly hub: CallEventHub,
    private readonly options: CallRepositoryOptions,
  ) {}

  private publishRows(projectId: string, type: 'started' | 'ended' | 'updated', rows: CallRow[]) {
    for (const row of rows) this.hub.publish(projectId ?? row.projectId, { type, call: toSummary(row) });
  }

  /**
   * Marks the hours of these calls for the report rollups (modules/reports/rollup-worker.ts). The
   * reports count ended calls only, so only the writes that end a call or change an ended call's
   * figures mark: the end (and the refusal at the inbound limit, the crash close), the analysis, a
   * human grade, and a stored recording that moved the turns (a knowledge gap is dated by its turn).
   * A live call is in no report until it ends; answer, turns, flow steps and tags change no figure
   * of an ended call. No path deletes a call; a project removed in the database takes its calls
   * and its rollups alike (both cascade from projects).
   */
  private async markStatsDirty(rows: Pick<CallRow, 'projectId' | 'startedAt'>[]) {
    if (rows.length === 0) return;
    const marks = new Map<string, { projectId: string; hour: Date }>();
    for (const row of rows) {
      const hour = new Date(Math.floor(row.startedAt.getTime() / HOUR_MS) * HOUR_MS);
      marks.set(`${row.projectId}/${hour.getTime()}`, { projectId: row.projectId, hour });
    }
    await this.db
      .insert(callStatsDirty)
      .values([...marks.values()])
      .onConflictDoUpdate({
        target: [callStatsDirty.projectId, callStatsDirty.hour],
        set: { markedAt: sql`now()` },
      });
    this.options.onStatsDirty?.();
  }

  private lease() {
    return { leaseOwner: this.options.owner, leaseUntil: new Date(Date.now() + CALL_LEASE_MS) };
  }

  async create(call: NewCallRecord): Promise<void> {
    const rows = await this.db
      .insert(calls)
      .values({ ...call, variables: call.variables ?? {}, status: 'ringing', ...this.lease() })
      .returning();
    this.publishRows(call.projectId, 'started', rows);
    for (const row of rows) await this.webhooks?.started(row);
  }

  private get webhooks() {
    return this.options.webhooks;
  }

  async createInbound(call: NewCallRecord, limit: number): Promise<'admitted' | 'over_limit'> {
    const { rows, admitted } = await this.db.transaction(async (tx) => {
      // One admission at a time per project, in every process: the count below stays exact.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`callin:${call.projectId}`}))`);
      const [live] = await tx
        .select({ n: sql<number>`count(*)::int` })
        .from(calls)
        .where(
          and(
            eq(calls.projectId, call.projectId),
            eq(calls.direction, 'inbound'),
            ne(calls.status, 'ended'),
            not(orphaned(this.options)),
          ),
        );
      const ok = (live?.n ?? 0) < limit;
      const inserted = await tx
        .insert(calls)
        .values({
          ...call,
          variables: call.variables ?? {},
          ...(ok
            ? { status: 'ringing' as const, ...this.lease() }
            : {
                status: 'ended' as const,
                endReason: 'callin_limit' as const,
                hangupBy: 'system' as const,
                endedAt: call.startedAt,
              }),
        })
        .returning();
      return { rows: inserted, admitted: ok };
    });
    if (!admitted) await this.markStatsDirty(rows);
    this.publishRows(call.projectId, admitted ? 'started' : 'ended', rows);
    // A call refused at the limit never started; receivers still learn that it came and ended.
    for (const row of rows) await (admitted ? this.webhooks?.started(row) : this.webhooks?.ended(row));
    return admitted ? 'admitted' : 'over_limit';
  }

  /** No write: the call is 'ringing' from its creation; only receivers of call.ringing hear of it. */
  async ringing(_projectId: string, callId: string, at: Date): Promise<void> {
    if (!this.webhooks) return;
    const [row] = await this.db.select().from(calls).where(eq(calls.id, callId)).limit(1);
    if (row) await this.webhooks.ringing(row, at);
  }

  async answered(projectId: string, callId: string, at: Date): Promise<void> {
    const rows = await this.db
      .update(calls)
      .set({ status: 'in_progress', answeredAt: at })
      .where(eq(calls.id, callId))
      .returning();
    this.hub.publish(projectId, { type: 'answered', callId, answeredAt: at.toISOString() });
    for (const row of rows) await this.webhooks?.answered(row);
  }

  async turn(projectId: string, callId: string, turn: CallTurn): Promise<void> {
    await this.db.insert(callTurns).values({ callId, ...turn });
    await this.db
      .update(calls)
      .set({ turnCount: sql`${calls.turnCount} + 1` })
      .where(eq(calls.id, callId));
    this.hub.publish(projectId, { type: 'turn', callId, turn });
  }

  /**
   * Appended in the database, so steps written one after another keep their order without a read.
   * No event: the path is read with the detail, and the turns already show the call going on.
   */
  async flowStep(_projectId: string, callId: string, step: FlowStep): Promise<void> {
    await this.db
      .update(calls)
      .set({ flowPath: sql`${calls.flowPath} || ${JSON.stringify([step])}::jsonb` })
      .where(eq(calls.id, callId));
  }

  async end(projectId: string, callId: string, end: CallEnd): Promise<void> {
    const rows = await this.db
      .update(calls)
      .set({
        ...endColumns(end.endedAt),
        endReason: end.endReason,
        hangupBy: end.hangupBy,
        transferNumber: end.transfer?.number ?? null,
        transferredAt: end.transfer?.at ?? null,
      })
      .where(eq(calls.id, callId))
      .returning();
    await this.markStatsDirty(rows);
    this.publishRows(projectId, 'ended', rows);
    for (const row of rows) await this.webhooks?.ended(row);
  }

  async analysis(projectId: string, callId: string, analysis: CallAnalysisRecord): Promise<void> {
    const rows = await this.db
      .update(calls)
      .set({
        machineGrade: analysis.grade,
        // A human grade given meanwhile stays the one that counts.
        intentGrade: sql`coalesce(${calls.humanGrade}, ${analysis.grade})`,
        gradeReason: analysis.reason,
        summary: analysis.summary,
        fields: analysis.fields,
        analysisBy: analysis.by,
      })
      .where(eq(calls.id, callId))
      .returning();
    await this.markStatsDirty(rows);
    this.publishRows(projectId, 'updated', rows);
    for (const row of rows) await this.webhooks?.analyzed(row);
  }

  async recordingPending(_projectId: string, callId: string, source: 'mix' | 'line'): Promise<void> {
    await this.db
      .update(calls)
      .set({ recording: 'pending', recordingSource: source })
      .where(eq(calls.id, callId));
  }

  /** 人工复核: a human grade (null gives the machine's back); refused for a call nobody answered. */
  async setHumanGrade(
    projectId: string,
    callId: string,
    grade: IntentGrade | null,
    userId: string,
  ): Promise<CallDetail> {
    const row = await findCall(this.db, projectId, callId);
    if (!row.answeredAt && grade) throw badRequest('字段 grade：未接通的通话没有意向等级');
    const updated = await this.db
      .update(calls)
      .set({
        humanGrade: grade,
        intentGrade: grade ?? row.machineGrade,
        humanGradedBy: grade ? userId : null,
        humanGradedAt: grade ? new Date() : null,
      })
      .where(and(eq(calls.projectId, projectId), eq(calls.id, callId)))
      .returning();
    await this.markStatsDirty(updated);
    // A grade that changed what counts is analysis receivers act on (CRM follow-ups by grade).
    if (grade !== row.humanGrade) for (const changed of updated) await this.webhooks?.analyzed(changed);
    return this.publishDetail(projectId, callId);
  }

  async setTags(projectId: string, callId: string, tags: string[]): Promise<CallDetail> {
    await findCall(this.db, projectId, callId);
    await this.db
      .update(calls)
      .set({ tags: [...new Set(tags)] })
      .where(and(eq(calls.projectId, projectId), eq(calls.id, callId)));
    return this.publishDetail(projectId, callId);
  }

  private async publishDetail(projectId: string, callId: string): Promise<CallDetail> {
    const detail = await getCallDetail(this.db, projectId, callId);
    this.hub.publish(projectId, { type: 'updated', call: detail });
    return detail;
  }

  /** The registry's heartbeat: this process still runs these calls. */
  async renewLeases(callIds: string[]): Promise<void> {
    if (callIds.length === 0) return;
    await this.db
      .update(calls)
      .set({ leaseUntil: new Date(Date.now() + CALL_LEASE_MS) })
      .where(
        and(inArray(calls.id, callIds), eq(calls.leaseOwner, this.options.owner), ne(calls.status, 'ended')),
      );
  }

  /**
   * Closes as 系统中断 the live calls a dead process left (the one rule: see `orphaned`), all of
   * them or only those of `callIds`, as ended at `endedAt` (the dialer's clock for its recovery).
   * Returns the ids it closed.
   */
  async closeOrphaned(callIds?: string[], endedAt = new Date()): Promise<string[]> {
    if (callIds?.length === 0) return [];
    const rows = await this.db
      .update(calls)
      .set({
        ...endColumns(endedAt),
        endReason: 'interrupted',
        hangupBy: 'system',
        leaseOwner: null,
        leaseUntil: null,
      })
      .where(
        and(
          ne(calls.status, 'ended'),
          orphaned(this.options),
          callIds ? inArray(calls.id, callIds) : undefined,
        ),
      )
      .returning();
    await this.markStatsDirty(rows);
    for (const row of rows) this.publishRows(row.projectId, 'ended', [row]);
    for (const row of rows) await this.webhooks?.ended(row);
    return rows.map((r) => r.id);
  }

  /** For the dialer's recovery (see modules/tasks/dialer-store.ts): the same rule, for these calls. */
  interruptLive(callIds: string[], at: Date): Promise<string[]> {
    return this.closeOrphaned(callIds, at);
  }

  /**
   * Claims the newest pending recording for `leaseMs` (the call someone just made is the one being
   * waited for). Any process may mix it; a claim cut off by a crash expires and is taken again.
   */
  async claimRecording(worker: string, leaseMs: number): Promise<CallRow | null> {
    const now = new Date();
    const rows = await this.db.transaction(async (tx) => {
      const [next] = await tx
        .select({ id: calls.id })
        .from(calls)
        .where(
          and(
            eq(calls.recording, 'pending'),
            or(isNull(calls.recordingLeaseUntil), lt(calls.recordingLeaseUntil, now)),
          ),
        )
        .orderBy(desc(calls.startedAt))
        .limit(1)
        .for('update', { skipLocked: true });
      if (!next) return [];
      return tx
        .update(calls)
        .set({ recordingLeaseOwner: worker, recordingLeaseUntil: new Date(now.getTime() + leaseMs) })
        .where(eq(calls.id, next.id))
        .returning();
    });
    return rows[0] ?? null;
  }

  /** The mixed recording is stored; turns move to where they are heard in it. */
  async recordingReady(
    projectId: string,
    callId: string,
    worker: string,
    recording: { key: string; durationMs: number; turns: Pick<CallTurn, 'index' | 'startMs' | 'endMs'>[] },
  ): Promise<boolean> {
    const rows = await this.db.transaction(async (tx) => {
      const claimed = await tx
        .update(calls)
        .set({
          recording: 'ready',
          recordingKey: recording.key,
          recordingError: null,
          recordingDurationMs: recording.durationMs,
          recordingLeaseOwner: null,
          recordingLeaseUntil: null,
        })
        .where(and(eq(calls.id, callId), eq(calls.recordingLeaseOwner, worker)))
        .returning();
      if (claimed.length === 0) return [];
      for (const turn of recording.turns) {
        await tx
          .update(callTurns)
          .set({ startMs: turn.startMs, endMs: turn.endMs })
          .where(and(eq(callTurns.callId, callId), eq(callTurns.index, turn.index)));
      }
      return claimed;
    });
    if (recording.turns.length > 0) await this.markStatsDirty(rows);
    this.publishRows(projectId, 'updated', rows);
    for (const row of rows) await this.webhooks?.recordingReady(row);
    return rows.length > 0;
  }

  /** The recording could not be made or kept; `reason` is shown on the call (磁盘已满…). */
  async recordingFailed(projectId: string, callId: string, worker: string, reason: string): Promise<void> {
    const rows = await this.db
      .update(calls)
      .set({
        recording: 'failed',
        recordingKey: null,
        recordingError: reason,
        recordingLeaseOwner: null,
        recordingLeaseUntil: null,
      })
      .where(and(eq(calls.id, callId), eq(calls.recordingLeaseOwner, worker)))
      .returning();
    this.publishRows(projectId, 'updated', rows);
  }
}

/** An ended call's columns; talk time from the stored answer time, in the same statement. */
function endColumns(endedAt: Date) {
  const at = endedAt.toISOString();
  return {
    status: 'ended' as const,
    endedAt,
    // An unanswered call talked 0 s.
    talkSeconds: sql<number>`coalesce(greatest(0, round(extract(epoch from (${at}::timestamptz - ${calls.answeredAt}))))::int, 0)`,
  };
}

/**
 * The one rule for a call left live by a process that is gone. On PostgreSQL (several processes):
 * nobody renews its lease any more (it ran out, or it never had one). On the embedded database,
 * which serves one process: this process does not own it (it was left by an earlier one).
 */
function orphaned(options: CallRepositoryOptions): SQL {
  return options.singleProcess
    ? sql`${calls.leaseOwner} is distinct from ${options.owner}`
    : (or(isNull(calls.leaseUntil), lt(calls.leaseUntil, sql`now()`)) as SQL);
}

const not = (condition: SQL) => sql`not (${condition})`;
