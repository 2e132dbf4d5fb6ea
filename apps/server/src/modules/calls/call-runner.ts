import { randomUUID } from 'node:crypto';
import type { AssistantConfig, CallTurn, EndReason, HangupBy, SimPersona } from '@callpilot/contracts';
import { and, eq, isNotNull } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { knowledgeSegments } from '../../db/schema';
import { analyzeCall } from '../../engine/analysis/analyze';
import { createBrain } from '../../engine/brain/create-brain';
import type { Clock } from '../../engine/clock';
import { runCallSession } from '../../engine/session/call-session';
import type { TelephonyAdapter } from '../../engine/telephony/types';
import { notFound } from '../../lib/errors';
import { getAssistant, getPublishedVersion } from '../assistants/assistants.service';
import { fillConfig, type ProviderResolver } from '../assistants/test-chat';
import { addToDoNotCall } from '../do-not-call/do-not-call.service';
import type { Embedder } from '../knowledge/embedder';
import { retrieve } from '../knowledge/retrieval';
import type { CallStore } from './call-store';

/** The number simulated calls come from (a fictitious Shanghai landline). */
export const SIM_CALLER_NUMBER = '02160880000';

export interface CallRunnerDeps {
  db: Database;
  store: CallStore;
  carrier: TelephonyAdapter;
  /** Schedules and stamps calls (a task's windows, the record's times). */
  clock: Clock;
  /**
   * A clock and carrier of the call's own, when calls run faster than real time
   * (SIM_TIME_SCALE): time then starts at the real moment the call starts, so its record is
   * stamped when it happened, and only its own duration is compressed.
   */
  forCall?: () => { clock: Clock; carrier: TelephonyAdapter };
  resolveProvider: ProviderResolver;
  embedderFor?: (projectId: string) => Promise<Embedder | undefined>;
  /** Called once an answered call has its transcript, to mix its recording in the background. */
  enqueueRecording?: (projectId: string, callId: string) => void;
  onError?: (err: unknown, context: string) => void;
}

export interface PlaceCallOptions {
  projectId: string;
  assistantId: string;
  /** A published version; undefined runs the live published version, 'draft' the draft (test calls). */
  version?: number | 'draft';
  callerNumber: string;
  calleeNumber: string;
  persona?: SimPersona;
  /** Simulated carrier: what a question-asking callee asks (the linked FAQ's questions). */
  questions?: string[];
  variables?: Record<string, string>;
  taskId?: string | null;
  taskName?: string | null;
  contactId?: string | null;
  contactName?: string | null;
  callId?: string;
  signal?: AbortSignal;
  /** Told once the record exists, so a caller can answer with its id before the call ends. */
  onCreated?: (callId: string) => void;
}

export interface LoadedAssistant {
  assistantId: string;
  name: string;
  version: number | null;
  config: AssistantConfig;
}

/** The config a call runs on: a frozen version, or the draft for a test call from the editor. */
export async function loadAssistantForCall(
  db: Database,
  projectId: string,
  assistantId: string,
  version: number | 'draft' | undefined,
): Promise<LoadedAssistant> {
  if (version === 'draft') {
    const draft = await getAssistant(db, projectId, assistantId);
    return { assistantId, name: draft.name, version: null, config: draft.config };
  }
  const published = await getPublishedVersion(db, projectId, assistantId, version);
  if (!published) {
    await getAssistant(db, projectId, assistantId); // 404 for a missing assistant
    throw notFound(version ? `版本 v${version} 不存在` : '小助手尚未发布，请先发布或使用草稿模拟通话');
  }
  return { assistantId, name: published.name, version: published.version, config: published.config };
}

/** Questions a knowledge-asking simulated callee may ask: the linked FAQ's own questions. */
export async function knowledgeQuestions(
  db: Database,
  config: AssistantConfig,
  limit = 20,
): Promise<string[]> {
  const [baseId] = config.knowledge.baseIds;
  if (!baseId) return [];
  const rows = await db
    .select({ question: knowledgeSegments.question })
    .from(knowledgeSegments)
    .where(and(eq(knowledgeSegments.knowledgeBaseId, baseId), isNotNull(knowledgeSegments.question)))
    .limit(limit);
  return rows.map((r) => r.question as string);
}

/**
 * One call from dial to analysis: the record is written as the call goes (the list shows it
 * live), the session runs the assistant over the answered leg, and the analysis grades it.
 * Never throws for a call that went wrong: it ends as `failed` with the reason logged.
 */
export async function placeCall(
  deps: CallRunnerDeps,
  options: PlaceCallOptions,
  loaded?: LoadedAssistant,
): Promise<{ callId: string; endReason: EndReason }> {
  const { db, store } = deps;
  const { clock, carrier } = deps.forCall?.() ?? deps;
  // A simulated clock must not jump ahead while the call's own database work is in flight.
  const tracked = (clock as { track?: <T>(p: Promise<T>) => Promise<T> }).track?.bind(clock);
  const io = <T>(work: Promise<T>): Promise<T> => (tracked ? tracked(work) : work);
  const assistant =
    loaded ?? (await io(loadAssistantForCall(db, options.projectId, options.assistantId, options.version)));
  const config = fillConfig(assistant.config, options.variables ?? {});
  const callId = options.callId ?? randomUUID();
  const at = () => new Date(clock.now());
  await io(
    store.create({
      id: callId,
      projectId: options.projectId,
      direction: 'outbound',
      callerNumber: options.callerNumber,
      calleeNumber: options.calleeNumber,
      taskId: options.taskId ?? null,
      taskName: options.taskName ?? null,
      contactId: options.contactId ?? null,
      contactName: options.contactName ?? null,
      assistantId: assistant.assistantId,
      assistantName: assistant.name,
      assistantVersion: assistant.version,
      persona: options.persona ?? null,
      variables: options.variables ?? {},
      startedAt: at(),
    }),
  );
  options.onCreated?.(callId);

  let endReason: EndReason = 'failed';
  let hangupBy: HangupBy = 'system';
  let endedAt = at();
  let turns: CallTurn[] = [];
  let liveGrade: Parameters<typeof analyzeCall>[0]['liveGrade'] = null;
  let transfer: { number: string; at: Date } | null = null;
  let answered = false;
  try {
    const result = await carrier.originate({
      callId,
      from: options.callerNumber,
      to: options.calleeNumber,
      persona: options.persona,
      questions: options.questions,
      signal: options.signal,
    });
    if (!result.answered) {
      endReason = result.outcome;
      hangupBy = 'system';
      endedAt = at();
    } else {
      answered = true;
      const leg = result.leg;
      await io(store.answered(options.projectId, callId, new Date(leg.answeredAt)));
      const provider = config.brain.providerId
        ? await io(deps.resolveProvider(options.projectId, config.brain.providerId))
        : null;
      const brain = createBrain({ config, provider });
      const embedder = config.knowledge.baseIds.length
        ? await io(deps.embedderFor?.(options.projectId) ?? Promise.resolve(undefined))
        : undefined;
      const session = await runCallSession(
        { callId, config, leg, remoteNumber: options.calleeNumber, signal: options.signal },
        {
          clock,
          brain,
          retrieve: async (query) =>
            config.knowledge.baseIds.length === 0
              ? []
              : (
                  await io(
                    retrieve(db, {
                      projectId: options.projectId,
                      knowledgeBaseIds: config.knowledge.baseIds,
                      query,
                      topK: config.knowledge.topK,
                      scoreThreshold: config.knowledge.scoreThreshold,
                      embedder,
                      onEmbedderError: (err) => deps.onError?.(err, 'embeddings'),
                    }),
                  )
                ).segments,
          optOut: async (phone, reason) => {
            await io(addToDoNotCall(db, options.projectId, phone, 'opt_out', reason));
          },
        },
        { onTurn: (turn) => io(store.turn(options.projectId, callId, turn)) },
      );
      endReason = session.endReason;
      hangupBy = session.hangupBy;
      endedAt = new Date(session.endedAt);
      turns = session.turns;
      liveGrade = session.liveGrade;
      transfer = session.transfer?.ok
        ? { number: session.transfer.number, at: new Date(session.transfer.at) }
        : null;
    }
  } catch (err) {
    deps.onError?.(err, 'call');
    endReason = 'failed';
    hangupBy = 'system';
    endedAt = at();
  }

  await io(store.end(options.projectId, callId, { endReason, hangupBy, endedAt, transfer }));
  try {
    const provider = config.brain.providerId
      ? await io(deps.resolveProvider(options.projectId, config.brain.providerId))
      : null;
    const analysis = await io(analyzeCall({ config, turns, endReason, liveGrade, provider }));
    await io(store.analysis(options.projectId, callId, analysis));
  } catch (err) {
    deps.onError?.(err, 'analysis');
  }
  if (answered && turns.length > 0 && deps.enqueueRecording) {
    await io(store.recordingPending(callId));
    deps.enqueueRecording(options.projectId, callId);
  }
  return { callId, endReason };
}
