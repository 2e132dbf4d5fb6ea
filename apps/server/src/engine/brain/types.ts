import type {
  AssistantConfig,
  BrainAction,
  ChatMessage,
  IntentGrade,
  RetrievedSegment,
} from '@callpilot/contracts';

/** What a brain says while it thinks: reply text as it streams, actions, and the intent it sees. */
export type BrainEvent =
  | { type: 'delta'; text: string }
  | { type: 'action'; action: BrainAction; detail: string }
  | { type: 'intent'; grade: IntentGrade; reason: string };

export interface BrainTurn {
  /** The assistant's config, with the contact's variables already filled into prompt and lines. */
  config: AssistantConfig;
  /** The conversation so far, oldest first, without the current utterance. */
  history: ChatMessage[];
  /** The callee's latest words; null when the callee stayed silent past the timeout. */
  utterance: string | null;
  /** Knowledge retrieved for the utterance, best first, already above the assistant's threshold. */
  knowledge: RetrievedSegment[];
  /** 1 for the callee's first utterance, counting silences too. */
  turnIndex: number;
  signal?: AbortSignal;
}

/**
 * Decides what the assistant says next. The opening line is not a brain turn: the session speaks
 * it (variables filled) before the first utterance.
 */
export interface Brain {
  readonly mode: 'llm' | 'script';
  turn(input: BrainTurn): AsyncIterable<BrainEvent>;
}
