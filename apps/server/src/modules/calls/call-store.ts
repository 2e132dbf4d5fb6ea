import type { CallTurn, EndReason, HangupBy, IntentGrade, SimPersona } from '@callpilot/contracts';
import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { calls, callTurns } from '../../db/schema';
import type { CallEventHub } from './call-events';
import { type CallRow, toSummary } from './calls.service';

export interface NewCall {
  id: string;
  projectId: string;
  direction: 'outbound' | 'inbound';
  callerNumber: string;
  calleeNumber: string;
  taskId?: string | null;
  taskName?: string | null;
  contactId?: string | null;
  contactName?: string | null;
  assistantId: string | null;
  assistantName: string;
  assistantVersion: number | null;
  persona?: SimPersona | null;
  variables?: Record<string, string>;
  startedAt: Date;
}

export interface CallEnd {
  endReason: EndReason;
  hangupBy: HangupBy;
  endedAt: Date;
  transfer?: { number: string; at: Date } | null;
}

export interface CallAnalysis {
  grade: IntentGrade | null;
  reason: string;
  summary: string;
  fields: Record<string, string>;
  by: 'llm' | 'rules';
}

/**
 * Writes a call's record as the engine reports it and announces every change on the hub, so the
 * list and the detail page follow a call live.
 */
export class CallStore {
  constructor(
    private readonly db: Database,
    private readonly hub: CallEventHub,
  ) {}

  /** Announces a written row; every write returns its row, so nothing is read back. */
  private publishRow(projectId: string, type: 'started' | 'ended' | 'updated', rows: CallRow[]) {
    const [row] = rows;
    if (row) this.hub.publish(projectId, { type, call: toSummary(row) });
  }

  async create(call: NewCall): Promise<void> {
    const rows = await this.db
      .insert(calls)
      .values({ ...call, variables: call.variables ?? {}, status: 'ringing' })
      .returning();
    this.publishRow(call.projectId, 'started', rows);
  }

  async answered(projectId: string, callId: string, at: Date): Promise<void> {
    await this.db.update(calls).set({ status: 'in_progress', answeredAt: at }).where(eq(calls.id, callId));
    this.hub.publish(projectId, { type: 'answered', callId, answeredAt: at.toISOString() });
  }

  async turn(projectId: string, callId: string, turn: CallTurn): Promise<void> {
    await this.db.insert(callTurns).values({ callId, ...turn });
    await this.db
      .update(calls)
      .set({ turnCount: sql`${calls.turnCount} + 1` })
      .where(eq(calls.id, callId));
    this.hub.publish(projectId, { type: 'turn', callId, turn });
  }

  async end(projectId: string, callId: string, end: CallEnd): Promise<void> {
    const endedAt = end.endedAt.toISOString();
    const rows = await this.db
      .update(calls)
      .set({
        status: 'ended',
        endReason: end.endReason,
        hangupBy: end.hangupBy,
        endedAt: end.endedAt,
        // From the stored answer time, in the same statement: an unanswered call talked 0 s.
        talkSeconds: sql`coalesce(greatest(0, round(extract(epoch from (${endedAt}::timestamptz - ${calls.answeredAt}))))::int, 0)`,
        transferNumber: end.transfer?.number ?? null,
        transferredAt: end.transfer?.at ?? null,
      })
      .where(eq(calls.id, callId))
      .returning();
    this.publishRow(projectId, 'ended', rows);
  }

  async analysis(projectId: string, callId: string, analysis: CallAnalysis): Promise<void> {
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
    this.publishRow(projectId, 'updated', rows);
  }

  async recordingPending(callId: string): Promise<void> {
    await this.db.update(calls).set({ recording: 'pending' }).where(eq(calls.id, callId));
  }

  /** The mixed recording is stored; turns move to where they are heard in it. */
  async recordingReady(
    projectId: string,
    callId: string,
    key: string,
    durationMs: number,
    turns: Pick<CallTurn, 'index' | 'startMs' | 'endMs'>[],
  ): Promise<void> {
    const rows = await this.db.transaction(async (tx) => {
      for (const turn of turns) {
        await tx
          .update(callTurns)
          .set({ startMs: turn.startMs, endMs: turn.endMs })
          .where(and(eq(callTurns.callId, callId), eq(callTurns.index, turn.index)));
      }
      return tx
        .update(calls)
        .set({ recording: 'ready', recordingKey: key, recordingDurationMs: durationMs })
        .where(eq(calls.id, callId))
        .returning();
    });
    this.publishRow(projectId, 'updated', rows);
  }

  async recordingFailed(projectId: string, callId: string): Promise<void> {
    const rows = await this.db
      .update(calls)
      .set({ recording: 'failed' })
      .where(eq(calls.id, callId))
      .returning();
    this.publishRow(projectId, 'updated', rows);
  }
}
