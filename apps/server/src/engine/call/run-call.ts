import { randomUUID } from 'node:crypto';
import type {
  AssistantConfig,
  CallTurn,
  EndReason,
  HangupBy,
  IntentGrade,
  SimPersona,
} from '@callpilot/contracts';
import { analyzeCall } from '../analysis/analyze';
import { createBrain } from '../brain/create-brain';
import type { Clock } from '../clock';
import type { FlowHttpRequest, FlowHttpResult } from '../flow/types';
import { persistently } from '../retry';
import { runCallSession } from '../session/call-session';
import type { SessionResult } from '../session/types';
import type { CallLeg, LegMedia, TelephonyAdapter } from '../telephony/types';
import { fillConfig } from './fill-config';
import type { CallAssistant, CallPorts } from './ports';

/** The number simulated calls come from (a fictitious Shanghai landline). */
export const SIM_CALLER_NUMBER = '02160880000';

/** What one call runs with: the ports, and the clock and carrier of this call. */
export interface CallDeps {
  ports: CallPorts;
  /** Stamps the record and times the session (a simulated clock in tests, the bench and the demo). */
  clock: Clock;
  carrier: TelephonyAdapter;
  onError?: (err: unknown, context: string) => void;
  /** A recording became pending: wake a recording worker. */
  onRecordingPending?: () => void;
  /**
   * A voice and ears for a real line (an assistant's, or a flow's prompts and recogniser); absent
   * on the simulated carrier, which passes text.
   */
  legMedia?: (projectId: string, speech: CallSpeech) => Promise<LegMedia>;
  /** A flow's HTTP nodes' requests (the guard against private addresses); absent: they fail. */
  flowHttp?: (request: FlowHttpRequest) => Promise<FlowHttpResult>;
  /** Sees each answered call's session result (the benchmarks read its per-turn overhead). */
  observe?: (callId: string, session: SessionResult) => void;
  /** Sees each turn as it is recorded, with the assistant it ran on (provider latency metrics). */
  onTurn?: (turn: CallTurn, config: AssistantConfig) => void;
  /** Real ms the brain may stay silent in a turn before the fallback line is said (default 8 s). */
  brainSilenceBudgetMs?: number;
}

/** What a line's media is made of: the voice that speaks, the recogniser that listens. */
export type CallSpeech = Pick<AssistantConfig, 'voice' | 'hearing'>;

export interface CallOutcome {
  callId: string;
  endReason: EndReason;
}

/** Wraps the call's own I/O so a simulated clock stands still while the database works. */
export function ioFor(clock: Clock) {
  const tracked = (clock as { track?: <T>(p: Promise<T>) => Promise<T> }).track?.bind(clock);
  return <T>(work: Promise<T>): Promise<T> => (tracked ? tracked(work) : work);
}

export interface OutboundCall {
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
  /** Aborted when the process stops: a call cut off by it ends as 系统中断 (retried by task rules). */
  shutdown?: AbortSignal;
  /** Told once the record exists, so a caller can answer with its id before the call ends. */
  onCreated?: (callId: string) => void;
  /**
   * Told once the hang-up is recorded, before the post-call pipeline (analysis, the session's
   * actions, the recording's queueing): the line is free, so a dialer can reuse its slot while
   * the rest runs.
   */
  onEnded?: (outcome: CallOutcome) => void;
}

/**
 * An outbound call from dial to analysis: the record is written as the call goes (the list shows
 * it live), the session runs the assistant over the answered leg, then the post-call pipeline.
 * Never throws for a call that went wrong: it ends as `failed` with the reason reported.
 */
export async function placeCall(
  deps: CallDeps,
  call: OutboundCall,
  loaded?: CallAssistant,
): Promise<CallOutcome> {
  const { clock, carrier, ports } = deps;
  const io = ioFor(clock);
  const assistant =
    loaded ?? (await io(ports.assistants.forCall(call.projectId, call.assistantId, call.version)));
  const callId = call.callId ?? randomUUID();
  await io(
    ports.recorder.create({
      id: callId,
      projectId: call.projectId,
      direction: 'outbound',
      callerNumber: call.callerNumber,
      calleeNumber: call.calleeNumber,
      taskId: call.taskId ?? null,
      taskName: call.taskName ?? null,
      contactId: call.contactId ?? null,
      contactName: call.contactName ?? null,
      assistantId: assistant.assistantId,
      assistantName: assistant.name,
      assistantVersion: assistant.version,
      persona: call.persona ?? null,
      variables: call.variables ?? {},
      startedAt: new Date(clock.now()),
    }),
  );
  call.onCreated?.(callId);
  return converse(deps, {
    projectId: call.projectId,
    callId,
    assistant,
    variables: call.variables ?? {},
    remoteNumber: call.calleeNumber,
    signal: call.signal,
    shutdown: call.shutdown,
    onEnded: call.onEnded,
    connect: async () => {
      const media = deps.legMedia ? await io(deps.legMedia(call.projectId, assistant.config)) : undefined;
      let ringing: Promise<void> = Promise.resolve();
      const result = await carrier.originate({
        callId,
        projectId: call.projectId,
        media,
        from: call.callerNumber,
        to: call.calleeNumber,
        persona: call.persona,
        questions: call.questions,
        signal: call.signal,
        onRinging: () => {
          const recorded = ports.recorder.ringing?.(call.projectId, callId, new Date(clock.now()));
          if (recorded) ringing = io(recorded).catch((err) => deps.onError?.(err, 'ringing'));
        },
      });
      // Recorded before the answer or the end, so their events follow it.
      await ringing;
      return result.answered ? { leg: result.leg } : { outcome: result.outcome };
    },
  });
}

interface Conversation {
  projectId: string;
  callId: string;
  assistant: CallAssistant;
  variables: Record<string, string>;
  /** The other party: whom an opt-out applies to and an SMS goes to. */
  remoteNumber: string;
  signal?: AbortSignal;
  shutdown?: AbortSignal;
  /** The hang-up is recorded; the post-call pipeline follows. */
  onEnded?: (outcome: CallOutcome) => void;
  /** Rings the other party (outbound) or picks up (inbound). */
  connect: () => Promise<{ leg: CallLeg } | { outcome: EndReason }>;
}

/**
 * The one way a call runs once its record exists, whichever way it started: connect, talk, end,
 * then the post-call pipeline (analysis, the session's actions, recording).
 */
export async function converse(deps: CallDeps, conversation: Conversation): Promise<CallOutcome> {
  const { clock, ports } = deps;
  const { projectId, callId, assistant } = conversation;
  const io = ioFor(clock);
  const config = fillConfig(assistant.config, conversation.variables);
  const at = () => new Date(clock.now());

  let endReason: EndReason = 'failed';
  let hangupBy: HangupBy = 'system';
  let endedAt = at();
  let session: SessionResult | null = null;
  let lineRecorded = false;
  /** Turns whose write failed (the database restarting): the call goes on, they are written at its end. */
  const unsaved: CallTurn[] = [];
  try {
    const connected = await conversation.connect();
    if ('outcome' in connected) {
      endReason = connected.outcome;
      endedAt = at();
    } else {
      const { leg } = connected;
      lineRecorded = leg.recordsLine === true;
      await io(ports.recorder.answered(projectId, callId, new Date(leg.answeredAt)));
      session = await talk(
        deps,
        {
          projectId,
          callId,
          config,
          leg,
          remoteNumber: conversation.remoteNumber,
          signal: conversation.signal,
        },
        (turn) => {
          deps.onTurn?.(turn, config);
          // The caller heard the fallback line; the operator still needs to see why, on the call's log.
          if (turn.latency?.brainError) deps.onError?.(new Error(turn.latency.brainError), 'brain');
          return io(ports.recorder.turn(projectId, callId, turn)).catch((err) => {
            unsaved.push(turn);
            deps.onError?.(err, 'turn');
          });
        },
      );
      deps.observe?.(callId, session);
      endReason = session.endReason;
      hangupBy = session.hangupBy;
      endedAt = new Date(session.endedAt);
      if (session.error) deps.onError?.(session.error, 'session');
    }
  } catch (err) {
    deps.onError?.(err, 'call');
    endReason = 'failed';
    hangupBy = 'system';
    endedAt = at();
  }
  if (conversation.shutdown?.aborted) {
    // Cut off by our own shutdown, not by the other party.
    endReason = 'interrupted';
    hangupBy = 'system';
  }
  const transfer = session?.transfer?.ok
    ? { number: session.transfer.number, at: new Date(session.transfer.at) }
    : null;
  for (const turn of unsaved) await persistently(() => io(ports.recorder.turn(projectId, callId, turn)));
  await persistently(() =>
    io(ports.recorder.end(projectId, callId, { endReason, hangupBy, endedAt, transfer })),
  );
  conversation.onEnded?.({ callId, endReason });
  await afterCall(deps, {
    projectId,
    callId,
    endReason,
    turns: session?.turns ?? [],
    analysis: { config, liveGrade: session?.liveGrade ?? null },
    sessions: session ? [{ assistantName: assistant.name, session }] : [],
    remoteNumber: conversation.remoteNumber,
    recorded: session !== null,
    lineRecorded,
  });
  return { callId, endReason };
}

/**
 * One assistant's conversation over an answered leg, with the call's brain, knowledge and
 * do-not-call list: a whole call's (converse), or a flow's assistant node's (`handoff`).
 */
export async function talk(
  deps: CallDeps,
  call: {
    projectId: string;
    callId: string;
    /** Variables already filled in. */
    config: AssistantConfig;
    leg: CallLeg;
    remoteNumber: string;
    signal?: AbortSignal;
    handoff?: boolean;
  },
  onTurn: (turn: CallTurn) => Promise<void>,
): Promise<SessionResult> {
  const { clock, ports } = deps;
  const { projectId, config } = call;
  const io = ioFor(clock);
  const provider = config.brain.providerId
    ? await io(ports.assistants.provider(projectId, config.brain.providerId))
    : null;
  return runCallSession(
    {
      callId: call.callId,
      config,
      leg: call.leg,
      remoteNumber: call.remoteNumber,
      signal: call.signal,
      handoff: call.handoff,
    },
    {
      clock,
      brain: createBrain({ config, provider }),
      retrieve: async (query) =>
        config.knowledge.baseIds.length === 0 ? null : io(ports.knowledge.retrieve(projectId, config, query)),
      optOut: (phone, reason) => io(ports.doNotCall.optOut(projectId, phone, reason, call.callId)),
      brainSilenceBudgetMs: deps.brainSilenceBudgetMs,
    },
    { onTurn },
  );
}

/** What the post-call pipeline needs, whichever way the call ran (an assistant's, a flow's). */
export interface CallEnding {
  projectId: string;
  callId: string;
  endReason: EndReason;
  /** The whole call's transcript. */
  turns: CallTurn[];
  /**
   * How the call is graded: by an assistant's config (its model, or its rules) with the grade its
   * brain saw; or, with no assistant in the call, by a summary of what happened (no grade).
   */
  analysis:
    | { config: AssistantConfig; liveGrade: { grade: IntentGrade; reason: string } | null }
    | { summary: string; fields: Record<string, string> };
  /** The assistants' conversations in the call: their actions (send_sms) are acted on. */
  sessions: { assistantName: string; session: SessionResult }[];
  /** The other party: whom an SMS goes to. */
  remoteNumber: string;
  /** Somebody answered: the call has a recording (of its turns, or the line's own). */
  recorded: boolean;
  /** The leg recorded the line itself (a real line's WAV). */
  lineRecorded: boolean;
}

/** After the call, in this order: analysis, then the sessions' actions, then the recording. */
export async function afterCall(deps: CallDeps, ending: CallEnding): Promise<void> {
  const { ports } = deps;
  const { projectId, callId, turns, lineRecorded } = ending;
  const io = ioFor(deps.clock);
  try {
    const how = ending.analysis;
    if ('summary' in how) {
      await io(
        ports.recorder.analysis(projectId, callId, {
          grade: null,
          reason: '',
          summary: how.summary,
          fields: how.fields,
          by: 'rules',
        }),
      );
    } else {
      const provider = how.config.brain.providerId
        ? await io(ports.assistants.provider(projectId, how.config.brain.providerId))
        : null;
      const analysis = await io(
        analyzeCall({
          config: how.config,
          turns,
          endReason: ending.endReason,
          liveGrade: how.liveGrade,
          provider,
        }),
      );
      await io(ports.recorder.analysis(projectId, callId, analysis));
    }
  } catch (err) {
    deps.onError?.(err, 'analysis');
  }
  for (const { assistantName, session } of ending.sessions) {
    for (const action of session.actions) {
      if (action.action !== 'send_sms' || !action.detail.trim()) continue;
      try {
        await io(
          ports.actions.sendSms({
            projectId,
            callId,
            to: ending.remoteNumber,
            template: 'assistant_send_sms',
            variables: { content: action.detail, assistantName },
          }),
        );
      } catch (err) {
        deps.onError?.(err, 'send_sms');
      }
    }
  }
  try {
    await io(ports.actions.afterCall({ projectId, callId }));
  } catch (err) {
    deps.onError?.(err, 'after_call');
  }
  if (ending.recorded && (turns.length > 0 || lineRecorded)) {
    await io(ports.recorder.recordingPending(projectId, callId, lineRecorded ? 'line' : 'mix'));
    deps.onRecordingPending?.();
  }
}
