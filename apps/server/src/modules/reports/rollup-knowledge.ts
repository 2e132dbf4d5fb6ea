import type { AssistantConfig, UsedSegment } from '@callpilot/contracts';
import { and, asc, eq, gte, inArray, lt } from 'drizzle-orm';
import type { Database } from '../../db/client';
import {
  assistants,
  assistantVersions,
  calls,
  callTurns,
  knowledgeGaps,
  knowledgeSegmentHitsHourly,
  knowledgeStatsHourly,
} from '../../db/schema';

const HOUR_MS = 3_600_000;
/** The assistant configuration's own default (contracts assistantKnowledge). */
export const DEFAULT_SCORE_THRESHOLD = 0.3;

export interface KnowledgeSetting {
  baseIds: string[];
  scoreThreshold: number;
}

type CallRef = { assistantId: string | null; assistantVersion: number | null };
const settingKey = (c: CallRef) => `${c.assistantId}:${c.assistantVersion ?? 'draft'}`;

/**
 * The knowledge bases and threshold each call ran with: its assistant version's configuration (a
 * call without a version, a test call, ran the draft). Keyed by settingKey.
 */
export async function knowledgeSettings(
  db: Database,
  refs: CallRef[],
): Promise<Map<string, KnowledgeSetting>> {
  const result = new Map<string, KnowledgeSetting>();
  const read = (config: unknown): KnowledgeSetting => {
    const knowledge = (config as Partial<AssistantConfig> | null)?.knowledge;
    return {
      baseIds: knowledge?.baseIds ?? [],
      scoreThreshold: knowledge?.scoreThreshold ?? DEFAULT_SCORE_THRESHOLD,
    };
  };
  const ids = [...new Set(refs.map((r) => r.assistantId).filter((id): id is string => id !== null))];
  if (ids.length === 0) return result;
  const versions = await db
    .select({
      id: assistantVersions.assistantId,
      version: assistantVersions.version,
      config: assistantVersions.config,
    })
    .from(assistantVersions)
    .where(inArray(assistantVersions.assistantId, ids));
  for (const v of versions) result.set(`${v.id}:${v.version}`, read(v.config));
  const drafts = await db
    .select({ id: assistants.id, config: assistants.config })
    .from(assistants)
    .where(inArray(assistants.id, ids));
  for (const d of drafts) result.set(`${d.id}:draft`, read(d.config));
  return result;
}

export const settingOf = (settings: Map<string, KnowledgeSetting>, call: CallRef): KnowledgeSetting =>
  settings.get(settingKey(call)) ?? { baseIds: [], scoreThreshold: DEFAULT_SCORE_THRESHOLD };

type TurnRow = {
  callId: string;
  index: number;
  speaker: 'assistant' | 'callee';
  text: string;
  startMs: number;
  latency: unknown;
  segments: unknown;
};

/**
 * The questions of a call: a callee turn with words followed by the assistant's reply through the
 * brain (a turn with latency). Retrieval runs on every such utterance when the assistant has
 * knowledge bases (engine/call/run-call.ts), and the reply turn records the segments it answered
 * from, so "searched and refused" is a reply turn with no used segment (at most the nearest
 * candidate, marked used: false); a silence
 * reprompt or a scripted line carries no latency and is not a question.
 */
export function questionsOf(turns: TurnRow[]): { turn: TurnRow; segments: UsedSegment[] }[] {
  const found: { turn: TurnRow; segments: UsedSegment[] }[] = [];
  for (let i = 0; i + 1 < turns.length; i++) {
    const turn = turns[i]!;
    const next = turns[i + 1]!;
    if (turn.speaker !== 'callee' || !turn.text.trim()) continue;
    if (next.speaker !== 'assistant' || next.latency === null) continue;
    found.push({ turn, segments: (next.segments as UsedSegment[] | null) ?? [] });
  }
  return found;
}

/**
 * knowledge_stats_hourly's row for the whole project (no knowledge base): the questions asked of
 * assistants with any base, each counted once, hits being the questions some base answered. A
 * question searched in two bases is one row of each base but must count once in the project's
 * figures, which the per-base rows cannot tell.
 */
export const PROJECT_TOTAL = '';

const bestOf = (segments: UsedSegment[]) =>
  [...segments].sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))[0];

/**
 * Rebuilds the knowledge rollups of one project-hour from calls and call_turns (the rollup
 * worker calls it per dirty hour, inside its transaction): per knowledge base of the assistant,
 * the questions asked, those a segment of that base answered at or above the assistant's
 * threshold, and those no base answered; and one knowledge_gaps row per unanswered question and
 * base. A question asked of an assistant with two bases counts once for each base, and once in the
 * project's row (PROJECT_TOTAL).
 */
export async function recomputeKnowledgeHour(tx: Database, projectId: string, hour: Date): Promise<void> {
  const start = new Date(Math.floor(hour.getTime() / HOUR_MS) * HOUR_MS);
  const end = new Date(start.getTime() + HOUR_MS);
  await tx
    .delete(knowledgeStatsHourly)
    .where(and(eq(knowledgeStatsHourly.projectId, projectId), eq(knowledgeStatsHourly.hour, start)));
  await tx
    .delete(knowledgeGaps)
    .where(and(eq(knowledgeGaps.projectId, projectId), eq(knowledgeGaps.hour, start)));
  await tx
    .delete(knowledgeSegmentHitsHourly)
    .where(
      and(eq(knowledgeSegmentHitsHourly.projectId, projectId), eq(knowledgeSegmentHitsHourly.hour, start)),
    );

  const hourCalls = await tx
    .select({
      id: calls.id,
      startedAt: calls.startedAt,
      assistantId: calls.assistantId,
      assistantVersion: calls.assistantVersion,
    })
    .from(calls)
    .where(
      and(
        eq(calls.projectId, projectId),
        gte(calls.startedAt, start),
        lt(calls.startedAt, end),
        // Like every rollup: a live call is in no report until it ends.
        eq(calls.status, 'ended'),
      ),
    );
  const withAssistant = hourCalls.filter((c) => c.assistantId !== null);
  if (withAssistant.length === 0) return;
  const settings = await knowledgeSettings(tx, withAssistant);
  const asking = withAssistant.filter((c) => settingOf(settings, c).baseIds.length > 0);
  if (asking.length === 0) return;

  const turns = await tx
    .select({
      callId: callTurns.callId,
      index: callTurns.index,
      speaker: callTurns.speaker,
      text: callTurns.text,
      startMs: callTurns.startMs,
      latency: callTurns.latency,
      segments: callTurns.segments,
    })
    .from(callTurns)
    .where(
      inArray(
        callTurns.callId,
        asking.map((c) => c.id),
      ),
    )
    .orderBy(asc(callTurns.callId), asc(callTurns.index));
  const turnsOf = new Map<string, TurnRow[]>();
  for (const t of turns) {
    const list = turnsOf.get(t.callId) ?? [];
    list.push(t);
    turnsOf.set(t.callId, list);
  }

  const stats = new Map<string, { questions: number; hits: number; noAnswer: number }>();
  const tally = (baseId: string, hit: boolean, unanswered: boolean) => {
    const row = stats.get(baseId) ?? { questions: 0, hits: 0, noAnswer: 0 };
    row.questions++;
    if (hit) row.hits++;
    if (unanswered) row.noAnswer++;
    stats.set(baseId, row);
  };
  const gaps: (typeof knowledgeGaps.$inferInsert)[] = [];
  // 常用分段: a segment counts once per question it answered (cleared the call's threshold).
  const segmentHits = new Map<string, { knowledgeBaseId: string; segmentId: string; hits: number }>();
  for (const call of asking) {
    const { baseIds, scoreThreshold } = settingOf(settings, call);
    for (const { turn, segments } of questionsOf(turnsOf.get(call.id) ?? [])) {
      // A refused question keeps its nearest candidate (used: false): what came closest, not an answer.
      const said = segments.filter((x) => x.used !== false && x.score >= scoreThreshold);
      const answered = said.length > 0;
      for (const s of new Map(said.map((x) => [x.id, x])).values()) {
        const key = `${s.knowledgeBaseId}\u0000${s.id}`;
        const row = segmentHits.get(key) ?? { knowledgeBaseId: s.knowledgeBaseId, segmentId: s.id, hits: 0 };
        row.hits++;
        segmentHits.set(key, row);
      }
      // The project's own row: each question once, however many bases were searched for it.
      tally(PROJECT_TOTAL, answered, !answered);
      const bestOverall = bestOf(segments);
      for (const baseId of new Set(baseIds)) {
        const own = segments.filter((s) => s.knowledgeBaseId === baseId);
        tally(
          baseId,
          said.some((s) => s.knowledgeBaseId === baseId),
          !answered,
        );
        if (answered) continue;
        // The closest thing retrieval offered: this base's best segment, else the best of any base
        // (retrieval ranks all the assistant's bases together, so the other base's is what came nearest).
        const best = bestOf(own) ?? bestOverall;
        gaps.push({
          projectId,
          hour: start,
          callId: call.id,
          turnIndex: turn.index,
          knowledgeBaseId: baseId,
          question: turn.text.trim(),
          bestSegmentId: best?.id ?? null,
          bestScore: best?.score ?? null,
          askedAt: new Date(call.startedAt.getTime() + turn.startMs),
        });
      }
    }
  }
  if (stats.size > 0) {
    await tx
      .insert(knowledgeStatsHourly)
      .values([...stats].map(([knowledgeBaseId, s]) => ({ projectId, hour: start, knowledgeBaseId, ...s })));
  }
  for (let i = 0; i < gaps.length; i += 500) await tx.insert(knowledgeGaps).values(gaps.slice(i, i + 500));
  const hitRows = [...segmentHits.values()].map((r) => ({ projectId, hour: start, ...r }));
  for (let i = 0; i < hitRows.length; i += 500)
    await tx.insert(knowledgeSegmentHitsHourly).values(hitRows.slice(i, i + 500));
}
