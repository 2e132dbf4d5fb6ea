import { randomUUID } from 'node:crypto';
import type { CallTurn, EndReason, HangupBy, SimPersona } from '@callpilot/contracts';
import { analyzeCall } from '../analysis/analyze';
import { createBrain } from '../brain/create-brain';
import type { Clock } from '../clock';
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
   * The assistant's voice and ears for a real line; absent on the simulated carrier, which
   * passes text.
   */
  legMedia?: (projectId: string, assistant: CallAssistant) => Promise<LegMedia>;
  /** Sees each answered call's session result (the benchmarks read its per-turn overhead). */
  observe?: (callId: string, session: SessionResult) => void;
}

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
    connect: async () => {
      const media = deps.legMedia ? await io(deps.legMedia(call.projectId, assistant)) : undefined;
      const result = await carrier.originate({
        callId,
        projectId: call.projectId,
        media,
        from: call.callerNumber,
        to: call.calleeNumber,
        persona: call.persona,
        questions: call.questions,
        signal: call.signal,
      });
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
  try {
    const connected = await conversation.connect();
    if ('outcome' in connected) {
      endReason = connected.outcome;
      endedAt = at();
    } else {
      const { leg } = connected;
      lineRecorded = leg.recordsLine === true;
      await io(ports.recorder.answered(projectId, callId, new Date(leg.answeredAt)));
      const provider = config.brain.providerId
        ? await io(ports.assistants.provider(projectId, config.brain.providerId))
        : null;
      session = await runCallSession(
        {
          callId,
          config,
          leg,
          remoteNumber: conversation.remoteNumber,
          signal: conversation.signal,
        },
        {
          clock,
          brain: createBrain({ config, provider }),
          retrieve: async (query) =>
            config.knowledge.baseIds.length === 0
              ? []
              : io(ports.knowledge.retrieve(projectId, config, query)),
          optOut: (phone, reason) => io(ports.doNotCall.optOut(projectId, phone, reason)),
        },
        { onTurn: (turn) => io(ports.recorder.turn(projectId, callId, turn)) },
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
  await io(ports.recorder.end(projectId, callId, { endReason, hangupBy, endedAt, transfer }));
  await afterCall(deps, {
    projectId,
    callId,
    assistant,
    config,
    endReason,
    session,
    conversation,
    lineRecorded,
  });
  return { callId, endReason };
}

/** After the call, in this order: analysis, then the session's actions, then the recording. */
async function afterCall(
  deps: CallDeps,
  input: {
    projectId: string;
    callId: string;
    assistant: CallAssistant;
    config: ReturnType<typeof fillConfig>;
    endReason: EndReason;
    session: SessionResult | null;
    conversation: Conversation;
    /** The leg recorded the line itself (a real line's WAV). */
    lineRecorded: boolean;
  },
): Promise<void> {
  const { ports } = deps;
  const { projectId, callId, config, session, lineRecorded } = input;
  const io = ioFor(deps.clock);
  const turns: CallTurn[] = session?.turns ?? [];
  try {
    const provider = config.brain.providerId
      ? await io(ports.assistants.provider(projectId, config.brain.providerId))
      : null;
    const analysis = await io(
      analyzeCall({
        config,
        turns,
        endReason: input.endReason,
        liveGrade: session?.liveGrade ?? null,
        provider,
      }),
    );
    await io(ports.recorder.analysis(projectId, callId, analysis));
  } catch (err) {
    deps.onError?.(err, 'analysis');
  }
  for (const action of session?.actions ?? []) {
    if (action.action !== 'send_sms' || !action.detail.trim()) continue;
    try {
      await io(
        ports.actions.sendSms({
          projectId,
          callId,
          to: input.conversation.remoteNumber,
          template: 'assistant_send_sms',
          variables: { content: action.detail, assistantName: input.assistant.name },
        }),
      );
    } catch (err) {
      deps.onError?.(err, 'send_sms');
    }
  }
  if (session && (turns.length > 0 || lineRecorded)) {
    await io(ports.recorder.recordingPending(projectId, callId, lineRecorded ? 'line' : 'mix'));
    deps.onRecordingPending?.();
  }
}
