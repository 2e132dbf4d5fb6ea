import type { CallTurn, FlowGraph, FlowStep, IntentGrade } from '@callpilot/contracts';
import type { Clock } from '../clock';
import type { CallLeg } from '../telephony/types';

/**
 * The flow interpreter's boundary: it runs a FlowGraph over any CallLeg (simulated, SIP, or the
 * editor's simulator leg) and talks to the rest of the server only through FlowDeps, so it knows
 * nothing of HTTP routes or tables.
 */

/** A flow frozen for one call: a published version, or the draft (null) for a test call. */
export interface LoadedFlow {
  flowId: string;
  name: string;
  version: number | null;
  graph: FlowGraph;
}

/** What an HTTP node asks for, templates already filled in. */
export interface FlowHttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body: string | null;
  timeoutMs: number;
  signal?: AbortSignal;
}
export type FlowHttpResult =
  | { ok: true; status: number; body: unknown; ms: number }
  /** `refused`: the address is private and the operator does not allow those (never sent). */
  | { ok: false; status: number | null; error: string; ms: number; refused?: boolean };

/** How an assistant node's conversation ended, as the flow continues with it. */
export interface FlowAssistantOutcome {
  /** The assistant finished (goodbye, max turns), the caller asked for a person, or the line is gone. */
  outcome: 'completed' | 'transfer' | 'hangup' | 'failed';
  grade: IntentGrade | null;
  assistantId: string;
  assistantName: string;
  version: number | null;
}

export interface FlowAssistantRequest {
  assistantId: string;
  /** null: the live published version. */
  version: number | null;
  variables: Record<string, string>;
  leg: CallLeg;
  /** Turns the assistant speaks and hears, numbered by the flow (one transcript per call). */
  onTurn: (turn: Omit<CallTurn, 'index'>) => Promise<void>;
  signal?: AbortSignal;
}

export interface FlowDeps {
  clock: Clock;
  /** A subflow's published graph; throws when it is gone or unpublished (the node fails over to hangup). */
  loadSubflow(flowId: string): Promise<LoadedFlow>;
  /** Sends an HTTP node's request (the server's guard refuses private addresses unless allowed). */
  http(request: FlowHttpRequest): Promise<FlowHttpResult>;
  /** Queues an SMS (the SMS sender's outbox until 短信管理 exists). */
  sendSms(to: string, content: string): Promise<void>;
  /** Runs an assistant's conversation over the leg and hands the line back (never hangs up on its own). */
  runAssistant(request: FlowAssistantRequest): Promise<FlowAssistantOutcome>;
  /** The audio of an uploaded prompt at 8 kHz; null when it is gone (the node's text is spoken instead). */
  audio?(audioId: string): Promise<Int16Array | null>;
}

export interface FlowRunInput {
  flow: LoadedFlow;
  leg: CallLeg;
  callId: string;
  /** Caller and dialled numbers (system variables caller / callee). */
  caller: string;
  callee: string;
  /** Starting variables (a test call's or the open API's). */
  variables?: Record<string, string>;
  signal?: AbortSignal;
}

export interface FlowEvents {
  /** A node finished (or the call ended inside it); steps arrive in order. */
  onStep?(step: FlowStep, variables: Readonly<Record<string, string>>): void | Promise<void>;
  /** A line spoken or an input heard: the call's transcript. */
  onTurn?(turn: CallTurn): void | Promise<void>;
  /** The flow waits for the caller at a node (the simulator shows what it expects). */
  onWaiting?(waiting: { nodeId: string; kind: 'digits' | 'speech' | 'any'; timeoutSec: number }): void;
}

export interface FlowRunResult {
  /** completed: a hangup node or the flow's end; callee_hangup; transferred; failed (an error, reported). */
  endReason: 'completed' | 'callee_hangup' | 'transferred' | 'failed';
  hangupBy: 'assistant' | 'callee' | 'system';
  endedAt: number;
  path: FlowStep[];
  turns: CallTurn[];
  variables: Record<string, string>;
  /** The hangup node's reason, when one ended the call. */
  endLabel: string;
  transfer: { number: string; at: number; ok: boolean } | null;
  /** The last assistant a node handed the call to (the call's analysis uses its config). */
  assistant: FlowAssistantOutcome | null;
  /** A voicemail left in the call: offsets in the recording. */
  voicemail: { startMs: number; endMs: number; text: string } | null;
  /** Per node executed, the interpreter's own CPU time (the bench's overhead budget). */
  overheadMs: number[];
  error: unknown;
}
