import type { HitTestSegment, KnowledgeVerdict, QueryAnalysis } from '@callpilot/contracts';
import type { Database } from '../../db/client';
import { ANSWER_CONFIDENCE, confidenceOf, DEFAULT_CUT, verdictOf } from './calibration';
import type { Embedder } from './embedder';
import { retrieve } from './retrieval';

/**
 * A model's help with one question (llm-assist.ts builds it from a model profile): rewriting
 * the caller's words as a clear question, and judging which candidates answer it.
 */
export interface LlmAssist {
  /** The caller's words as one clear standalone question (same language); may return them unchanged. */
  rewrite(query: string, signal: AbortSignal): Promise<string>;
  /** Ids of the candidates that answer the question, best first; [] when none does. */
  rerank(query: string, candidates: { id: string; text: string }[], signal: AbortSignal): Promise<string[]>;
}

export interface AnswerOptions {
  projectId: string;
  knowledgeBaseIds: string[];
  query: string;
  topK: number;
  /** Confidence the top hit needs to be answered (an assistant's 相似度阈值; default 0.3). */
  threshold?: number;
  embedder?: Embedder;
  onEmbedderError?: (err: unknown) => void;
  llm?: LlmAssist;
}

export interface KnowledgeAnswer {
  /** The top-K candidates, best first, each scored by calibrated confidence (not filtered). */
  segments: HitTestSegment[];
  confidence: number;
  threshold: number;
  verdict: KnowledgeVerdict;
  answered: boolean;
  query: QueryAnalysis;
  mode: 'fulltext' | 'hybrid';
  tookMs: number;
  rewriteMs: number | null;
  rerankMs: number | null;
  llmNotice: string;
}

/** The segments an assistant may answer from: those at or above the threshold, when it answers at all. */
export const usableSegments = (answer: KnowledgeAnswer) =>
  answer.answered ? answer.segments.filter((s) => s.score >= answer.threshold) : [];

/**
 * One question against an assistant's (or the hit test's) bases: cleaned, ranked, calibrated and
 * judged. Every path that answers callers from knowledge asks here (calls, test chat, flow
 * simulation, hit test, batch test), so they all decide the same way.
 */
export async function answerQuestion(db: Database, options: AnswerOptions): Promise<KnowledgeAnswer> {
  const started = performance.now();
  const threshold = options.threshold ?? ANSWER_CONFIDENCE;
  const found = await retrieve(db, {
    projectId: options.projectId,
    knowledgeBaseIds: options.knowledgeBaseIds,
    query: options.query,
    topK: options.topK,
    embedder: options.embedder,
    onEmbedderError: options.onEmbedderError,
  });
  const segments: HitTestSegment[] = found.segments.map((s) => ({
    ...s,
    relevance: s.score,
    score: confidenceOf(s.score, DEFAULT_CUT),
    matchedTerms: [],
    rerankPosition: null,
  }));
  const confidence = segments[0]?.score ?? 0;
  const verdict = verdictOf(confidence, threshold, false, segments.length > 0);
  return {
    segments,
    confidence,
    threshold,
    verdict,
    answered: verdict === 'answer',
    query: {
      original: options.query,
      cleaned: options.query,
      removedFillers: [],
      normalized: [],
      rewritten: null,
    },
    mode: found.mode,
    tookMs: Math.round((performance.now() - started) * 100) / 100,
    rewriteMs: null,
    rerankMs: null,
    llmNotice: '',
  };
}
