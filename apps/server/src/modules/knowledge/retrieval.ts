import type { RetrievedSegment } from '@callpilot/contracts';
import { and, desc, eq, inArray, isNotNull, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { knowledgeDocuments, knowledgeSegments } from '../../db/schema';
import type { Embedder } from './embedder';
import { indexTerms, type QueryTerm, queryTerms } from './text';

export type { RetrievedSegment };

export interface RetrieveOptions {
  projectId: string;
  knowledgeBaseIds: string[];
  query: string;
  topK: number;
  /** Segments scoring below it are left out (0-1; assistants default to 0.3). */
  scoreThreshold?: number;
  /** When given, lexical and embedding similarity are fused (mode 'hybrid'). */
  embedder?: Embedder;
  /** Told when the embeddings endpoint fails; retrieval then answers with full text alone. */
  onEmbedderError?: (err: unknown) => void;
}

export interface RetrieveResult {
  segments: RetrievedSegment[];
  tookMs: number;
  mode: 'fulltext' | 'hybrid';
}

/** Full-text candidates re-scored in process; enough for any top-k the API allows (20). */
const CANDIDATES = 60;
/** A synonym found instead of the caller's own word counts this much of the word's weight. */
const SYNONYM_CREDIT = 0.8;
/** Up to this many segments in scope, every segment sharing a term with the query is ranked. */
const SMALL_SCOPE = 3000;
/** In a larger scope, how many single-term matches are ranked when two-word matches are too few. */
const FALLBACK_SAMPLE = 200;
/** Above this many embedded segments the vector side only re-scores the full-text candidates. */
const MAX_VECTOR_SCAN = 5000;

/** The weighted share of the query's terms that `present` says a text contains. */
function coverage(terms: QueryTerm[], present: (term: string) => boolean): number {
  let total = 0;
  let matched = 0;
  for (const { term, weight, alternatives } of terms) {
    total += weight;
    if (present(term)) matched += weight;
    else if (alternatives.some(present)) matched += SYNONYM_CREDIT * weight;
  }
  return total === 0 ? 0 : matched / total;
}

/**
 * The most coverage() can be for a text: a term found as a substring. Every index term of a text
 * is a substring of it, lower-cased, so a phrasing whose bound is no better than the best
 * coverage so far is skipped without segmenting it.
 */
function coverageBound(terms: QueryTerm[], text: string): number {
  const lower = text.toLowerCase();
  return coverage(terms, (term) => lower.includes(term));
}

/**
 * The share of the query found within one phrasing of a pair's question: the question itself or
 * any of its similar questions, whichever covers most. Only candidates are scored, in process.
 */
function questionCoverage(terms: QueryTerm[], phrasings: string[]): number {
  let best = 0;
  const bounded = phrasings
    .map((text) => ({ text, bound: coverageBound(terms, text) }))
    .sort((a, b) => b.bound - a.bound);
  for (const { text, bound } of bounded) {
    if (bound <= best) break;
    const present = new Set(indexTerms(text).split(' '));
    best = Math.max(
      best,
      coverage(terms, (term) => present.has(term)),
    );
    if (best >= 1) break;
  }
  return best;
}

/** Quoted lexemes OR-ed together; quoting keeps to_tsquery from reading operators in user text. */
const lexeme = (w: string) => `'${w.replaceAll("'", "''").replaceAll('\\', '')}'`;
const orQuery = (terms: QueryTerm[]) =>
  terms.flatMap(({ term, alternatives }) => [term, ...alternatives].map(lexeme)).join(' | ');

/** "At least two of the query's words": every pair AND-ed, the pairs OR-ed. */
function twoWordQuery(terms: QueryTerm[]): string | undefined {
  // The callers' own words only: with synonyms the pairs multiply and so does the work.
  const words = terms.filter((t) => t.weight >= 0.5).map((t) => lexeme(t.term));
  const pairs: string[] = [];
  for (let i = 0; i < words.length; i++) {
    for (let j = i + 1; j < words.length; j++) pairs.push(`(${words[i]} & ${words[j]})`);
  }
  return pairs.length > 0 ? pairs.join(' | ') : undefined;
}

const sizes = new Map<string, { n: number; at: number }>();
/** Segments in the bases searched; cached briefly, as it only picks a strategy. */
async function scopeSize(db: Database, projectId: string, knowledgeBaseIds: string[]): Promise<number> {
  const key = `${projectId}:${[...knowledgeBaseIds].sort().join(',')}`;
  const cached = sizes.get(key);
  if (cached && Date.now() - cached.at < 30_000) return cached.n;
  const [{ n } = { n: 0 }] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(knowledgeSegments)
    .where(
      and(
        eq(knowledgeSegments.projectId, projectId),
        inArray(knowledgeSegments.knowledgeBaseId, knowledgeBaseIds),
      ),
    );
  if (sizes.size > 1000) sizes.clear();
  sizes.set(key, { n, at: Date.now() });
  return n;
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length && i < b.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Ranks the enabled segments of ready documents in the given bases of one project for a query.
 *
 * Candidates come from the GIN-indexed tsvector (query words and characters OR-ed), ordered by ts_rank_cd. Their
 * score is then normalised to 0..1 so that a threshold means the same thing for every query:
 * ts_rank_cd grows without bound with repetitions and segment length, so instead the score is
 * the weighted share of the query's key terms that the segment contains (1 = every key term).
 * Words weigh by length (1.5 for three characters or more, 1 for two, 0.5 for one) and each
 * character of a multi-character word 0.25, so a paraphrase that shares only characters
 * (装 / 安装) still scores, but well below one that shares the words. A pair's terms include
 * those of its similar questions (相似问). For a question-answer pair half of the score is that
 * share over the whole pair, and half the share within one phrasing of the question alone (the
 * question or one of its similar questions, whichever covers most), because a caller's question
 * paraphrases a question far more often than it quotes an answer; a similar question thus counts
 * exactly as the question would. Either half is at most 1, so the score stays within 0..1. A
 * threshold of 0.3 thus asks for roughly a third of what the caller said to be found in the segment.
 * In hybrid mode the score is the mean of that lexical score and the cosine similarity.
 */
export async function retrieve(db: Database, options: RetrieveOptions): Promise<RetrieveResult> {
  const started = performance.now();
  let mode: RetrieveResult['mode'] = 'fulltext';
  const threshold = options.scoreThreshold ?? 0;
  const words = queryTerms(options.query);
  const done = (segments: RetrievedSegment[]): RetrieveResult => ({
    segments: segments.filter((s) => s.score >= threshold).slice(0, options.topK),
    tookMs: Math.round((performance.now() - started) * 100) / 100,
    mode,
  });
  if (options.knowledgeBaseIds.length === 0 || options.topK <= 0) return done([]);

  const scope = and(
    eq(knowledgeSegments.projectId, options.projectId),
    inArray(knowledgeSegments.knowledgeBaseId, options.knowledgeBaseIds),
    eq(knowledgeSegments.enabled, true),
    eq(knowledgeDocuments.status, 'ready'),
  );
  const columns = {
    id: knowledgeSegments.id,
    knowledgeBaseId: knowledgeSegments.knowledgeBaseId,
    documentId: knowledgeSegments.documentId,
    documentName: knowledgeDocuments.fileName,
    content: knowledgeSegments.content,
    question: knowledgeSegments.question,
    answer: knowledgeSegments.answer,
    similarQuestions: knowledgeSegments.similarQuestions,
    terms: knowledgeSegments.terms,
  };
  type Row = {
    id: string;
    knowledgeBaseId: string;
    documentId: string;
    documentName: string;
    content: string;
    question: string | null;
    answer: string | null;
    similarQuestions: string[];
    terms: string;
    embedding?: number[] | null;
  };

  const anyTerm = sql`to_tsquery('simple', ${orQuery(words)})`;
  const ranked = (match: SQL, limit: number) =>
    db
      .select({ ...columns, ...(options.embedder ? { embedding: knowledgeSegments.embedding } : {}) })
      .from(knowledgeSegments)
      .innerJoin(knowledgeDocuments, eq(knowledgeDocuments.id, knowledgeSegments.documentId))
      .where(and(scope, match))
      .orderBy(desc(sql`ts_rank_cd(${knowledgeSegments.termsVector}, ${anyTerm})`), knowledgeSegments.id)
      .limit(limit);

  let lexicalRows: Row[] = [];
  if (words.length > 0) {
    if ((await scopeSize(db, options.projectId, options.knowledgeBaseIds)) <= SMALL_SCOPE) {
      // A small scope is ranked whole: every segment sharing a word or a character is a candidate.
      lexicalRows = await ranked(sql`${knowledgeSegments.termsVector} @@ ${anyTerm}`, CANDIDATES);
    } else {
      // In a large scope a frequent word or character matches thousands of segments, and ranking
      // them all costs far more than the budget. Candidates must then share at least two of the
      // query's words (pairs AND-ed, OR-ed together; the GIN index intersects them cheaply); only
      // when that finds too few does a single shared term suffice, over a capped sample.
      const pairs = twoWordQuery(words);
      if (pairs)
        lexicalRows = await ranked(
          sql`${knowledgeSegments.termsVector} @@ to_tsquery('simple', ${pairs})`,
          CANDIDATES,
        );
      if (lexicalRows.length < options.topK) {
        // Words only: a lone character is too weak a signal to sample a large scope by.
        const anyWord = words
          .filter((t) => t.weight >= 0.5)
          .map((t) => lexeme(t.term))
          .join(' | ');
        const sample = db
          .select({ id: knowledgeSegments.id })
          .from(knowledgeSegments)
          .where(
            and(
              eq(knowledgeSegments.projectId, options.projectId),
              inArray(knowledgeSegments.knowledgeBaseId, options.knowledgeBaseIds),
              sql`${knowledgeSegments.termsVector} @@ to_tsquery('simple', ${anyWord || orQuery(words)})`,
            ),
          )
          .limit(FALLBACK_SAMPLE);
        const seen = new Set(lexicalRows.map((r) => r.id));
        const more = await ranked(inArray(knowledgeSegments.id, sample), CANDIDATES);
        lexicalRows.push(...more.filter((r) => !seen.has(r.id)));
      }
    }
  }

  const lexical = (row: Row) => {
    const present = new Set(row.terms.split(' '));
    const all = coverage(words, (term) => present.has(term));
    if (row.question === null) return all;
    return 0.5 * all + 0.5 * questionCoverage(words, [row.question, ...row.similarQuestions]);
  };

  const candidates = new Map<string, { row: Row; lexical: number; order: number }>();
  lexicalRows.forEach((row, order) => {
    candidates.set(row.id, { row, lexical: lexical(row), order });
  });

  let similarity = new Map<string, number>();
  // A failing embeddings endpoint must not take answers away: the call goes on with full text.
  const queryVector = options.embedder
    ? await options.embedder([options.query]).then(
        ([vector]) => vector,
        (err: unknown) => {
          options.onEmbedderError?.(err);
          return undefined;
        },
      )
    : undefined;
  if (queryVector) {
    mode = 'hybrid';
    {
      const [{ n } = { n: 0 }] = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(knowledgeSegments)
        .innerJoin(knowledgeDocuments, eq(knowledgeDocuments.id, knowledgeSegments.documentId))
        .where(and(scope, isNotNull(knowledgeSegments.embedding)));
      // Small bases are scanned whole, so a paraphrase sharing no word with its answer is still found.
      const vectorRows: Row[] =
        n <= MAX_VECTOR_SCAN
          ? await db
              .select({ ...columns, embedding: knowledgeSegments.embedding })
              .from(knowledgeSegments)
              .innerJoin(knowledgeDocuments, eq(knowledgeDocuments.id, knowledgeSegments.documentId))
              .where(and(scope, isNotNull(knowledgeSegments.embedding)))
          : lexicalRows;
      similarity = new Map(
        vectorRows.map((row) => [
          row.id,
          row.embedding ? Math.max(0, cosine(queryVector, row.embedding)) : 0,
        ]),
      );
      const byVector = [...vectorRows].sort((a, b) => similarity.get(b.id)! - similarity.get(a.id)!);
      for (const row of byVector.slice(0, CANDIDATES)) {
        if (!candidates.has(row.id))
          candidates.set(row.id, { row, lexical: lexical(row), order: CANDIDATES });
      }
    }
  }

  const scored = [...candidates.values()].map(({ row, lexical: lex, order }) => ({
    order,
    segment: {
      id: row.id,
      knowledgeBaseId: row.knowledgeBaseId,
      documentId: row.documentId,
      documentName: row.documentName,
      content: row.content,
      question: row.question,
      answer: row.answer,
      // A segment indexed before the project had an embeddings model keeps its lexical score.
      score:
        Math.round(
          (similarity.has(row.id) && row.embedding ? (lex + similarity.get(row.id)!) / 2 : lex) * 1000,
        ) / 1000,
    },
  }));
  scored.sort((a, b) => b.segment.score - a.segment.score || a.order - b.order);
  return done(scored.map((s) => s.segment));
}
