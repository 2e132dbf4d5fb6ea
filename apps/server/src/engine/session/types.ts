import type {
  AssistantConfig,
  BrainAction,
  CallTurn,
  EndReason,
  HangupBy,
  IntentGrade,
} from '@callpilot/contracts';
import type { Brain } from '../brain/types';
import type { KnowledgeLookup } from '../call/ports';
import type { Clock } from '../clock';
import type { CallLeg } from '../telephony/types';

/** What the session needs from the rest of the server; tests and the bench pass their own. */
export interface SessionDeps {
  clock: Clock;
  /** The brain for this call's config (script brain offline, the LLM when configured). */
  brain: Brain;
  /** An utterance judged against the assistant's knowledge; null when it links no base (nothing searched). */
  retrieve: (query: string) => Promise<KnowledgeLookup | null>;
  /** Adds the callee's number to the project's do-not-call list (opt-out). */
  optOut: (phone: string, reason: string) => Promise<void>;
  /** Real ms the brain may stay silent before the turn says the fallback line (default 8 s). */
  brainSilenceBudgetMs?: number;
}

export interface SessionInput {
  callId: string;
  /** The config with the contact's variables already filled in (test-chat's fillConfig). */
  config: AssistantConfig;
  leg: CallLeg;
  /** The callee's number (outbound) or the caller's (inbound): whom an opt-out applies to. */
  remoteNumber: string;
  signal?: AbortSignal;
  /**
   * An IVR flow lent the line to the assistant and takes it back afterwards: the session never
   * hangs up at its end, and a caller asking for a person is handed back to the flow (which knows
   * where people answer) instead of being transferred by the assistant.
   */
  handoff?: boolean;
}

/** What the session reports as the call goes; the calls module persists and broadcasts it. */
export interface SessionEvents {
  onTurn(turn: CallTurn): void | Promise<void>;
  onTransfer?(number: string, at: number, ok: boolean): void | Promise<void>;
}

export interface SessionResult {
  endReason: EndReason;
  hangupBy: HangupBy;
  /** Clock time the call ended. */
  endedAt: number;
  turns: CallTurn[];
  /** The grade the brain saw during the call (its set-intent tool or script intent), if any. */
  liveGrade: { grade: IntentGrade; reason: string } | null;
  transfer: { number: string; at: number; ok: boolean } | null;
  /**
   * A handed-off session (`handoff`) ended because the caller asked for a person: the transfer
   * line was said, nothing was dialled (endReason 'transferred', `transfer` null).
   */
  transferRequested: boolean;
  /** Per assistant turn, the session's own CPU time (not awaiting brain, retrieval, speech or clock). */
  overheadMs: number[];
  /** Every action the brain asked for, in order (send_sms is left to the caller to act on). */
  actions: { action: BrainAction; detail: string; at: number }[];
  /** The unexpected error behind a `failed` call, for the caller's log; null otherwise. */
  error: unknown;
}
