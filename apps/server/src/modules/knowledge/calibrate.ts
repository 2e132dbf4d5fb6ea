import type { KnowledgeCalibration } from '@callpilot/contracts';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { knowledgeBases, knowledgeDocuments, knowledgeSegments } from '../../db/schema';
import { DEFAULT_CUT, type StoredCalibration } from './calibration';
import type { Embedder } from './embedder';
import { type RetrieveOptions, retrieve } from './retrieval';
import { settledTermStats } from './term-stats';

/** Probes of each kind, at most: enough for a stable quantile, few enough to take seconds, not minutes. */
const MAX_PROBES = 240;
/**
 * Share of the leave-one-out probes allowed above the cut. Those probes are the hardest questions a
 * base does not answer: worded like its own questions, sharing most of their words with a
 * neighbouring entry. Callers' unanswerable questions share far fewer, so letting half of these
 * through keeps callers' wrong answers rare (bench knowledge-answers: about one in ten) while the
 * answerable half of the base is still answered.
 */
const TARGET_WRONG = 0.5;
/** Weight of the product default in the cut, in probes: a base with few probes leans on it. */
const PRIOR_PROBES = 25;
const MIN_CUT = 0.3;
const MAX_CUT = 0.85;

const squash = (text: string | null) => (text ?? '').replace(/\s+/g, '');

/** Every n-th of a list, so a large base is probed evenly rather than by its first documents. */
const spread = <T>(list: T[], max: number): T[] =>
  list.length <= max
    ? list
    : Array.from({ length: max }, (_, i) => list[Math.floor((i * list.length) / max)]!);

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/**
 * Learns where this base's right and wrong top hits fall, from its own content:
 * - right: each listed 相似问 of a pair (or an FAQ entry), asked with that phrasing hidden from its
 *   own pair, should find the pair (the pair's other words still match, as a caller's would);
 * - wrong: each pair's question asked with that pair left out finds some other segment, necessarily
 *   the wrong one: where those fall is where a question the base does not answer lands.
 * The cut is the raw relevance above which at most TARGET_WRONG of the wrong probes remain, leaning
 * on the product default when the base has few probes; confidence 0.3 is mapped to it.
 */
export async function calibrateBase(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  options: { embedder?: Embedder } = {},
): Promise<StoredCalibration> {
  const [base] = await db
    .select({ revision: knowledgeBases.revision })
    .from(knowledgeBases)
    .where(and(eq(knowledgeBases.id, knowledgeBaseId), eq(knowledgeBases.projectId, projectId)));
  if (!base) throw new Error(`knowledge base ${knowledgeBaseId} not found`);
  await settledTermStats(db, [knowledgeBaseId]);
  const segments = await db
    .select({
      id: knowledgeSegments.id,
      question: knowledgeSegments.question,
      answer: knowledgeSegments.answer,
      similarQuestions: knowledgeSegments.similarQuestions,
    })
    .from(knowledgeSegments)
    .innerJoin(knowledgeDocuments, eq(knowledgeDocuments.id, knowledgeSegments.documentId))
    .where(
      and(
        eq(knowledgeSegments.knowledgeBaseId, knowledgeBaseId),
        eq(knowledgeSegments.enabled, true),
        eq(knowledgeDocuments.status, 'ready'),
      ),
    );
  const asked = segments.filter((s) => s.question !== null);
  // Segments giving the same answer are one answer (a pair imported twice, an entry cut in parts).
  const sameAnswer = new Map<string, string[]>();
  for (const s of asked) {
    const key = squash(s.answer);
    sameAnswer.set(key, [...(sameAnswer.get(key) ?? []), s.id]);
  }
  const common: Omit<RetrieveOptions, 'query'> = {
    projectId,
    knowledgeBaseIds: [knowledgeBaseId],
    topK: 1,
    embedder: options.embedder,
  };

  const right: number[] = [];
  const phrasings = spread(
    asked.flatMap((s) => s.similarQuestions.slice(0, 3).map((text) => ({ segment: s, text }))),
    MAX_PROBES,
  );
  for (const { segment, text } of phrasings) {
    const [top] = (
      await retrieve(db, { ...common, query: text, hidePhrasing: { segmentId: segment.id, text } })
    ).segments;
    if (top && sameAnswer.get(squash(segment.answer))?.includes(top.id)) {
      right.push(top.score);
    } else {
      right.push(0);
    }
  }
  const wrong: number[] = [];
  for (const segment of spread(asked, MAX_PROBES)) {
    const excludeIds = new Set(sameAnswer.get(squash(segment.answer)) ?? [segment.id]);
    const [top] = (await retrieve(db, { ...common, query: segment.question!, excludeIds })).segments;
    wrong.push(top?.score ?? 0);
  }

  wrong.sort((a, b) => a - b);
  const learned = quantile(wrong, 1 - TARGET_WRONG);
  const n = wrong.length;
  const blended = n === 0 ? DEFAULT_CUT : (n * learned + PRIOR_PROBES * DEFAULT_CUT) / (n + PRIOR_PROBES);
  const cut = Math.round(Math.min(MAX_CUT, Math.max(MIN_CUT, blended)) * 1000) / 1000;
  const calibration: KnowledgeCalibration = {
    cut,
    positives: right.length,
    negatives: wrong.length,
    recall: right.length === 0 ? 0 : right.filter((r) => r >= cut).length / right.length,
    wrongRate: n === 0 ? 0 : wrong.filter((w) => w >= cut).length / n,
    usesDefault: n < PRIOR_PROBES,
    computedAt: new Date().toISOString(),
  };
  const stored: StoredCalibration = { ...calibration, revision: base.revision };
  await db
    .update(knowledgeBases)
    .set({ calibration: stored })
    .where(and(eq(knowledgeBases.id, knowledgeBaseId), eq(knowledgeBases.revision, base.revision)));
  return stored;
}

const running = new Map<string, Promise<unknown>>();

/**
 * Recalibrates a base whose content changed since its calibration, in the background: the question
 * that noticed it is answered with the previous cut (or the default), the next ones with the new.
 */
export function recalibrateLater(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  options: { embedder?: Embedder; onError?: (err: unknown) => void } = {},
): Promise<unknown> {
  const current = running.get(knowledgeBaseId);
  if (current) return current;
  const job = calibrateBase(db, projectId, knowledgeBaseId, options)
    .catch((err: unknown) => options.onError?.(err))
    .finally(() => running.delete(knowledgeBaseId));
  running.set(knowledgeBaseId, job);
  return job;
}

/** Waits for background calibrations (tests; a clean shutdown). */
export const calibrationsSettled = () => Promise.all([...running.values()]);
