import type {
  AssistantConfig,
  CallDirection,
  CallTurn,
  EndReason,
  FlowStep,
  HangupBy,
  IntentGrade,
  KnowledgeVerdict,
  RetrievedSegment,
  SimPersona,
  SpeechSettings,
} from '@callpilot/contracts';
import type { BrainProvider } from '../brain/create-brain';
import type { LoadedFlow } from '../flow/types';
import type { RecognizerProfile } from '../speech/recognizer';
import type { SynthesizerProfile } from '../speech/synthesizer';

/**
 * What the engine needs from the rest of the server to run a call, as small interfaces the
 * modules implement (assistants, knowledge, do-not-call, numbers, the call repository). The
 * runtime wires them; the engine never sees a table or an HTTP request.
 */

/** An assistant configuration frozen for one call: a published version, or the draft for a test call. */
export interface CallAssistant {
  assistantId: string;
  name: string;
  /** null when a test call runs the unpublished draft. */
  version: number | null;
  config: AssistantConfig;
}

export interface AssistantSource {
  /**
   * The configuration a call runs on: `version` a published version, undefined the live published
   * one, 'draft' the draft. Throws (a 404-style error) when there is none.
   */
  forCall(projectId: string, assistantId: string, version?: number | 'draft'): Promise<CallAssistant>;
  /** The LLM profile an assistant's brain names; null runs the offline script brain. */
  provider(projectId: string, providerId: string): Promise<BrainProvider | null>;
  /**
   * The speech-recognition profile an assistant's hearing names, resolved per call like the
   * brain's (a task keeps its CallAssistant for its whole run; a key changed meanwhile must
   * apply). null when the profile is gone. Only real lines listen with it; the simulator speaks text.
   */
  recognizer(projectId: string, providerId: string): Promise<RecognizerProfile | null>;
  /**
   * The speech-synthesis profile an assistant's voice (or the project's fallback voice) names,
   * resolved per call like the recogniser's. null when the profile is gone.
   */
  synthesizer(projectId: string, providerId: string): Promise<SynthesizerProfile | null>;
  /**
   * The project's speech defaults (语音配置): the recogniser of assistants that pick none, the
   * recogniser and voice that take over when an assistant's own fail, and their timeouts.
   */
  speechSettings(projectId: string): Promise<SpeechSettings>;
}

/** How the knowledge judged one question: whether the assistant may answer it, and how surely. */
export interface KnowledgeJudgement {
  verdict: KnowledgeVerdict;
  /** Calibrated confidence of the best candidate (0 when nothing matched). */
  confidence: number;
  /** The assistant's 置信度阈值 it was judged against. */
  threshold: number;
}

/** One utterance looked up in an assistant's knowledge bases. */
export interface KnowledgeLookup extends KnowledgeJudgement {
  /** What the assistant may answer from: at or above the threshold, best first; empty when refused. */
  segments: RetrievedSegment[];
  /** The best candidate of a refused question (what came closest, for the knowledge gap); else null. */
  nearest: RetrievedSegment | null;
  /** Time the assistant's model spent rewriting and re-ranking, when it did. */
  rewriteMs: number | null;
  rerankMs: number | null;
}

export interface KnowledgeSource {
  /** An utterance judged against the assistant's bases and threshold (no bases: nothing found, no_match). */
  retrieve(projectId: string, config: AssistantConfig, query: string): Promise<KnowledgeLookup>;
  /** Questions a knowledge-asking simulated caller may ask: the linked bases' own questions. */
  questions(config: AssistantConfig, limit: number): Promise<string[]>;
}

export interface DoNotCallList {
  /** The callee (or caller) asked not to be called again, during call `callId`. */
  optOut(projectId: string, phone: string, reason: string, callId?: string): Promise<void>;
}

export interface NewCallRecord {
  id: string;
  projectId: string;
  direction: CallDirection;
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
  /** The call flow answering it (name snapshotted); version null: a draft's test call. */
  flowId?: string | null;
  flowName?: string | null;
  flowVersion?: number | null;
  startedAt: Date;
}

export interface CallEnd {
  endReason: EndReason;
  hangupBy: HangupBy;
  endedAt: Date;
  transfer?: { number: string; at: Date } | null;
}

export interface CallAnalysisRecord {
  grade: IntentGrade | null;
  reason: string;
  summary: string;
  fields: Record<string, string>;
  by: 'llm' | 'rules';
}

/**
 * The call record as the engine reports it. One writer implements it (the calls module's
 * repository), and every write is published as a live event there.
 */
export interface CallRecorder {
  create(call: NewCallRecord): Promise<void>;
  /**
   * An inbound call, admitted only while the project has fewer than `limit` live inbound calls
   * (across every process). Refused calls are recorded as ended with `callin_limit`.
   */
  createInbound(call: NewCallRecord, limit: number): Promise<'admitted' | 'over_limit'>;
  /** The carrier reports the callee's phone ringing (outbound calls; not every carrier can). */
  ringing?(projectId: string, callId: string, at: Date): Promise<void>;
  answered(projectId: string, callId: string, at: Date): Promise<void>;
  turn(projectId: string, callId: string, turn: CallTurn): Promise<void>;
  /** A flow call went through a node: appended to the call's path, in order. */
  flowStep(projectId: string, callId: string, step: FlowStep): Promise<void>;
  end(projectId: string, callId: string, end: CallEnd): Promise<void>;
  analysis(projectId: string, callId: string, analysis: CallAnalysisRecord): Promise<void>;
  /**
   * The call has a recording to store, by any process's recording worker: `mix` synthesises it
   * from the transcript later; `line` stores the WAV the media worker recorded from a real line.
   */
  recordingPending(projectId: string, callId: string, source: 'mix' | 'line'): Promise<void>;
}

/** Where an inbound call to a number goes. */
export interface InboundRoute {
  projectId: string;
  /** The assistant answering the number; null when the number belongs to the project but is not bound. */
  assistantId: string | null;
  /** Or the call flow answering it (a number has one or the other). */
  flowId: string | null;
  /** The project's concurrentCallin. */
  callinLimit: number;
}

export interface InboundRoutes {
  /** The route of a dialled number (stored form); null when no project owns it. */
  lookup(number: string): Promise<InboundRoute | null>;
}

/**
 * An SMS of a call: one the assistant asked for (the brain's send_sms), sent after the call, or a
 * flow's 发送短信 node, sent as the call reaches it.
 */
export type CallSmsRequest = {
  projectId: string;
  callId: string;
  to: string;
} & (
  | { template: 'assistant_send_sms'; variables: { content: string; assistantName: string } }
  | { template: 'flow_sms'; variables: { content: string; flowName: string } }
);

/** What happens after a call, once it is analysed: the session's actions. */
export interface PostCallActions {
  sendSms(request: CallSmsRequest): Promise<void>;
  /**
   * The call is over and its analysis stored (grade, summary): follow-up work that reads them, such
   * as the follow-up SMS rules of its assistant and task.
   */
  afterCall(call: { projectId: string; callId: string }): Promise<void>;
}

/** Call flows (通话流程) as calls run them. */
export interface FlowSource {
  /**
   * The flow a call runs: `version` a published one, undefined the live published one, 'draft' the
   * draft (a 模拟来电 from the editor). Throws (a 404-style error) when there is none.
   */
  forCall(projectId: string, flowId: string, version?: number | 'draft'): Promise<LoadedFlow>;
  /** An uploaded prompt's audio at 8 kHz; null when it is gone. */
  audio(projectId: string, audioId: string): Promise<Int16Array | null>;
}

/** Every port a call needs. */
export interface CallPorts {
  assistants: AssistantSource;
  /** Absent where flows do not run (engine tests of assistants only). */
  flows?: FlowSource;
  knowledge: KnowledgeSource;
  doNotCall: DoNotCallList;
  recorder: CallRecorder;
  actions: PostCallActions;
  inbound: InboundRoutes;
}
