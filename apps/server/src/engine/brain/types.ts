import type {
  AssistantConfig,
  BrainAction,
  ChatMessage,
  IntentGrade,
  RetrievedSegment,
} from '@callpilot/contracts';
import type { KnowledgeJudgement } from '../call/ports';

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
  /** Knowledge the assistant may answer from, best first: at or above its threshold, empty when refused. */
  knowledge: RetrievedSegment[];
  /**
   * How the knowledge judged the utterance; null when nothing was searched (no base linked, or a
   * silence). A verdict other than 'answer' means: do not answer from guesses.
   */
  knowledgeVerdict: KnowledgeJudgement | null;
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
