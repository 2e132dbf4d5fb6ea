import { and, eq, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import {
  callStatsHistogram,
  callStatsHourly,
  calls,
  knowledgeGaps,
  knowledgeSegmentHitsHourly,
  knowledgeStatsHourly,
} from '../../db/schema';
import { assistantTalkedSql, lineNumberSql, waitSecondsSql } from '../calls/calls.service';
import { recomputeHistograms } from './rollup-histograms';
import { recomputeKnowledgeHour } from './rollup-knowledge';

export type RollupTx = Parameters<Parameters<Database['transaction']>[0]>[0];

export const HOUR_MS = 3_600_000;

/** The hour (UTC-aligned; China time is a whole-hour offset) a moment belongs to. */
export const hourOf = (at: Date) => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);

/**
 * The metrics of call_stats_hourly, each an aggregate over the hour's ENDED calls (a live call is
 * in no report until it ends). The call list's drill-down filters express the same definitions
 * (modules/calls/calls.service.ts), so a figure's drill lists exactly the calls it counted:
 *
 * - calls: every ended call (inbound: every call offered, refused ones included).
 * - answered: answered_at set (the line was picked up, by an assistant or a flow).
 * - assistantAnswered: answered, and an assistant talked: a call answered by an assistant with at
 *   least one turn, or a flow call whose path reached an assistant node (flow calls keep
 *   assistant_id null, and their prompts are 'assistant' turns too). Drill: assistantTalked=yes.
 * - transferred: transferred_at set. optOut: end_reason 'opt_out'.
 * - abandonedRinging (inbound): not answered and not refused at the limit (end_reason is not
 *   callin_limit): the caller hung up while it rang, or nobody could answer. Drill: answered=no and
 *   every end reason but callin_limit.
 * - abandonedFlow (inbound): answered, no assistant talked, no transfer, and the caller hung up:
 *   they left the flow (menus, prompts) before anyone served them (a flow that ended the call
 *   itself, after playing its answer, served them). Drill: answered=yes, assistantTalked=no,
 *   transferred=no, hangupBy=callee.
 * - overLimit (inbound): end_reason 'callin_limit' (refused over the project's concurrentCallin).
 * - rejected (outbound): end_reason busy or rejected.
 * - shortAnswered: answered and talked under 10 s.
 * - answeredWithinN: answered and the wait (start → answer, rounded seconds) ≤ N; cumulative.
 * - talk/wait sums and maxima: over answered calls (talk is 0 when unanswered); turnsSum: all turns.
 * - gradeX: intent_grade (human ?? machine) = X.
 */
export async function recomputeCallStats(tx: RollupTx, projectId: string, hour: Date): Promise<void> {
  const answered = sql`${calls.answeredAt} is not null`;
  const inbound = sql`${calls.direction} = 'inbound'`;
  const count = (condition: SQL) => sql`(count(*) filter (where ${condition}))::int`;
  const end = new Date(hour.getTime() + HOUR_MS);
  await tx.execute(sql`
    insert into ${callStatsHourly} (
      project_id, hour, direction, assistant_id, assistant_version, line_number, flow_id, task_id,
      calls, answered, assistant_answered, transferred, opt_out, abandoned_ringing, abandoned_flow,
      over_limit, rejected, short_answered, answered_within_3, answered_within_5, answered_within_10,
      answered_within_20, talk_seconds_sum, talk_seconds_max, wait_seconds_sum, wait_seconds_max,
      turns_sum, grade_a, grade_b, grade_c, grade_d
    )
    select
      ${projectId}, ${hour.toISOString()}::timestamptz, ${calls.direction},
      coalesce(${calls.assistantId}, ''), coalesce(${calls.assistantVersion}, 0), ${lineNumberSql},
      coalesce(${calls.flowId}, ''), coalesce(${calls.taskId}, ''),
      count(*)::int,
      ${count(answered)},
      ${count(assistantTalkedSql)},
      ${count(sql`${calls.transferredAt} is not null`)},
      ${count(sql`${calls.endReason} = 'opt_out'`)},
      ${count(sql`${inbound} and ${calls.answeredAt} is null and ${calls.endReason} is distinct from 'callin_limit'`)},
      ${count(sql`${inbound} and ${answered} and not ${assistantTalkedSql} and ${calls.transferredAt} is null and ${calls.hangupBy} = 'callee'`)},
      ${count(sql`${calls.endReason} = 'callin_limit'`)},
      ${count(sql`${calls.direction} = 'outbound' and ${calls.endReason} in ('busy', 'rejected')`)},
      ${count(sql`${answered} and ${calls.talkSeconds} < 10`)},
      ${count(sql`${waitSecondsSql} <= 3`)},
      ${count(sql`${waitSecondsSql} <= 5`)},
      ${count(sql`${waitSecondsSql} <= 10`)},
      ${count(sql`${waitSecondsSql} <= 20`)},
      coalesce(sum(${calls.talkSeconds}), 0)::int,
      coalesce(max(${calls.talkSeconds}), 0)::int,
      coalesce(sum(${waitSecondsSql}), 0)::int,
      coalesce(max(${waitSecondsSql}), 0)::int,
      coalesce(sum(${calls.turnCount}), 0)::int,
      ${count(sql`${calls.intentGrade} = 'A'`)},
      ${count(sql`${calls.intentGrade} = 'B'`)},
      ${count(sql`${calls.intentGrade} = 'C'`)},
      ${count(sql`${calls.intentGrade} = 'D'`)}
    from ${calls}
    where ${calls.projectId} = ${projectId}
      and ${calls.startedAt} >= ${hour.toISOString()}::timestamptz
      and ${calls.startedAt} < ${end.toISOString()}::timestamptz
      and ${calls.status} = 'ended'
    group by 3, 4, 5, 6, 7, 8
  `);
}

/**
 * Rewrites every rollup of one project-hour from the calls (never incremented: a rebuild equals
 * the live rows by construction). The caller runs it in one transaction.
 */
export async function recomputeHour(tx: RollupTx, projectId: string, hour: Date): Promise<void> {
  for (const table of [
    callStatsHourly,
    callStatsHistogram,
    knowledgeStatsHourly,
    knowledgeSegmentHitsHourly,
    knowledgeGaps,
  ]) {
    await tx.delete(table).where(and(eq(table.projectId, projectId), eq(table.hour, hour)));
  }
  await recomputeCallStats(tx, projectId, hour);
  await recomputeHistograms(tx, projectId, hour);
  await recomputeKnowledgeHour(tx, projectId, hour);
}
