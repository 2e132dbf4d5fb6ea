import type { HitTestSegment, KnowledgeVerdict, QueryAnalysis } from '@callpilot/contracts';
import { and, eq, inArray } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { knowledgeBases } from '../../db/schema';
import { recalibrateLater } from './calibrate';
import { ANSWER_CONFIDENCE, confidenceOf, DEFAULT_CUT, verdictOf } from './calibration';
import type { Embedder } from './embedder';
import { analyzeQuery, type QueryTerm, type TermEntry, termIndex } from './query';
import { type RankedSegment, retrieve } from './retrieval';
import { loadProjectTerms } from './terms.service';

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
  /** The project's own 口语词典 entries; read (cached) from terms.service.ts when not given. */
  projectTerms?: TermEntry[];
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

/** The most the model may add to a question, per step, before the lexical answer is used alone. */
export const LLM_STEP_TIMEOUT_MS = 1500;
/** Candidates the model re-ranks. */
const RERANK_CANDIDATES = 8;
/**
 * Two different answers whose relevance differs by less than this are a coin toss: the caller gets
 * a follow-up rather than one of them at random.
 */
const AMBIGUOUS_MARGIN = 0.02;

const squash = (text: string | null) => (text ?? '').replace(/\s+/g, '');
const sameAnswer = (a: RankedSegment, b: RankedSegment) =>
  a.documentId === b.documentId && squash(a.answer ?? a.content) === squash(b.answer ?? b.content);

async function withTimeout<T>(step: (signal: AbortSignal) => Promise<T>, ms: number): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    return await Promise.race([
      step(controller.signal),
      new Promise<never>((_, reject) =>
        controller.signal.addEventListener('abort', () => reject(new Error('timeout')), { once: true }),
      ),
    ]);
  } catch (err) {
    // However the step reacted to the abort, the cause is the deadline.
    throw controller.signal.aborted ? new Error('timeout') : err;
  } finally {
    clearTimeout(timer);
  }
}

/** How long a question waits for its base's recalibration before using the previous cut. */
const CALIBRATION_WAIT_MS = 1500;
const sleep = (ms: number) =>
  new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms).unref?.());

const elapsed = (since: number) => Math.round((performance.now() - since) * 10) / 10;

/**
 * One question against an assistant's (or the hit test's) bases: cleaned, ranked, calibrated and
 * judged. Every path that answers callers from knowledge asks here (calls, test chat, flow
 * simulation, hit test, batch test), so they all decide the same way.
 *
 * Confidence is each segment's raw relevance mapped through its base's calibration (0.3 = the cut
 * learned from the base's own questions). The verdict refuses when the best confidence is below
 * the threshold, when nothing matched, or when the two best are different answers within a hair
 * of each other. With a model: the caller's words are also searched as the model rewrote them, and
 * the model judges the top candidates; its judgement weighs half of a candidate's confidence.
 */
export async function answerQuestion(db: Database, options: AnswerOptions): Promise<KnowledgeAnswer> {
  const started = performance.now();
  const threshold = options.threshold ?? ANSWER_CONFIDENCE;
  const index = termIndex(options.projectTerms ?? (await loadProjectTerms(db, options.projectId)));
  const analyzed = analyzeQuery(options.query, index);
  let llmNotice = '';
  const empty = (): KnowledgeAnswer => ({
    segments: [],
    confidence: 0,
    threshold,
    verdict: 'no_match',
    answered: false,
    query: { ...analyzed.analysis, rewritten: null },
    mode: 'fulltext',
    tookMs: elapsed(started),
    rewriteMs: null,
    rerankMs: null,
    llmNotice,
  });
  if (options.knowledgeBaseIds.length === 0 || options.topK <= 0) return empty();

  const bases = await db
    .select({
      id: knowledgeBases.id,
      revision: knowledgeBases.revision,
      calibration: knowledgeBases.calibration,
    })
    .from(knowledgeBases)
    .where(
      and(
        eq(knowledgeBases.projectId, options.projectId),
        inArray(knowledgeBases.id, options.knowledgeBaseIds),
      ),
    );
  const cuts = new Map<string, number>();
  await Promise.all(
    bases.map(async (base) => {
      cuts.set(base.id, base.calibration?.cut ?? DEFAULT_CUT);
      if (base.calibration?.revision === base.revision) return;
      // Content changed since the cut was learned: relearn it, waiting briefly (a small base takes
      // well under a second) so a question right after an upload is judged by the new content's
      // cut; a large base answers with the previous cut meanwhile.
      const job = recalibrateLater(db, options.projectId, base.id, { embedder: options.embedder });
      const fresh = await Promise.race([job, sleep(CALIBRATION_WAIT_MS)]);
      if (fresh && typeof fresh === 'object' && 'cut' in fresh)
        cuts.set(base.id, (fresh as { cut: number }).cut);
    }),
  );

  const depth = Math.max(options.topK, options.llm ? RERANK_CANDIDATES : 2);
  const search = (terms: QueryTerm[], query: string) =>
    retrieve(db, {
      projectId: options.projectId,
      knowledgeBaseIds: options.knowledgeBaseIds,
      query,
      terms,
      topK: depth,
      revisions: bases,
      embedder: options.embedder,
      onEmbedderError: options.onEmbedderError,
    });
  const first = await search(analyzed.terms, analyzed.analysis.cleaned || options.query);
  let ranked = first.segments;
  let mode = first.mode;

  let rewritten: string | null = null;
  let rewriteMs: number | null = null;
  let rerankMs: number | null = null;
  const positions = new Map<string, number>();
  const judged = new Set<string>();
  if (options.llm) {
    const llm = options.llm;
    const rewriteStart = performance.now();
    try {
      const text = (
        await withTimeout((signal) => llm.rewrite(options.query, signal), LLM_STEP_TIMEOUT_MS)
      ).trim();
      rewriteMs = elapsed(rewriteStart);
      if (text && text !== options.query.trim()) {
        rewritten = text;
        const again = analyzeQuery(text, index);
        const second = await search(again.terms, again.analysis.cleaned || text);
        if (second.mode === 'hybrid') mode = 'hybrid';
        const byId = new Map(ranked.map((s) => [s.id, s]));
        for (const s of second.segments) {
          const seen = byId.get(s.id);
          if (!seen || s.score > seen.score) byId.set(s.id, s);
        }
        ranked = [...byId.values()].sort((a, b) => b.score - a.score);
      }
    } catch (err) {
      rewriteMs = elapsed(rewriteStart);
      llmNotice = `问题改写未完成（${(err as Error).message === 'timeout' ? '超时' : '模型调用失败'}），已按原话检索`;
    }
    const candidates = ranked.slice(0, RERANK_CANDIDATES);
    if (candidates.length > 0) {
      const rerankStart = performance.now();
      try {
        const ids = await withTimeout(
          (signal) =>
            llm.rerank(
              rewritten ?? options.query,
              candidates.map((c) => ({
                id: c.id,
                text: c.question ? `${c.question}\n${c.answer ?? ''}` : c.content,
              })),
              signal,
            ),
          LLM_STEP_TIMEOUT_MS,
        );
        rerankMs = elapsed(rerankStart);
        for (const [i, id] of ids.entries()) positions.set(id, i + 1);
        for (const c of candidates) judged.add(c.id);
      } catch (err) {
        rerankMs = elapsed(rerankStart);
        const why = `重排未完成（${(err as Error).message === 'timeout' ? '超时' : '模型调用失败'}），已按检索排序`;
        llmNotice = llmNotice ? `${llmNotice}；${why}` : why;
      }
    }
  }

  const scored: HitTestSegment[] = ranked.map((s) => {
    let score = confidenceOf(s.score, cuts.get(s.knowledgeBaseId) ?? DEFAULT_CUT);
    if (judged.has(s.id)) score = Math.round((0.5 * score + (positions.has(s.id) ? 0.5 : 0)) * 1000) / 1000;
    return { ...s, relevance: s.score, score, rerankPosition: positions.get(s.id) ?? null };
  });
  scored.sort(
    (a, b) =>
      (a.rerankPosition ?? Number.POSITIVE_INFINITY) - (b.rerankPosition ?? Number.POSITIVE_INFINITY) ||
      b.score - a.score,
  );
  const top = scored[0];
  const runnerUp = scored.find((s) => top && !sameAnswer(s, top) && s.id !== top.id);
  const confidence = top?.score ?? 0;
  const ambiguous =
    top !== undefined &&
    top.rerankPosition === null &&
    runnerUp !== undefined &&
    top.relevance - runnerUp.relevance < AMBIGUOUS_MARGIN;
  const verdict = verdictOf(confidence, threshold, ambiguous, top !== undefined);
  return {
    segments: scored.slice(0, options.topK),
    confidence,
    threshold,
    verdict,
    answered: verdict === 'answer',
    query: { ...analyzed.analysis, rewritten },
    mode,
    tookMs: elapsed(started),
    rewriteMs,
    rerankMs,
    llmNotice,
  };
}
