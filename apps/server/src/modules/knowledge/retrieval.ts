import type { MatchedTerm, RetrievedSegment } from '@callpilot/contracts';
import { and, desc, eq, inArray, isNotNull, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { knowledgeDocuments, knowledgeSegments } from '../../db/schema';
import type { Embedder } from './embedder';
import { analyzeQuery, type QueryTerm, withoutFillers } from './query';
import { idf, type TermStats, termStats } from './term-stats';
import { indexTerms, isStopWord, segmentWords } from './text';

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
  /** The query as analysed (query.ts); analysed here from `query` when not given. */
  terms?: QueryTerm[];
  /** Calibration probes: segments left out, and one phrasing of a pair hidden from its own segment. */
  excludeIds?: ReadonlySet<string>;
  hidePhrasing?: { segmentId: string; text: string };
  /** The bases' revisions, when the caller has read them already (answerQuestion has). */
  revisions?: { id: string; revision: number }[];
}

/** A ranked segment with its raw relevance (score) and the terms it matched. */
export type RankedSegment = RetrievedSegment & { matchedTerms: MatchedTerm[] };

export interface RetrieveResult {
  segments: RankedSegment[];
  tookMs: number;
  mode: 'fulltext' | 'hybrid';
}

/** Full-text candidates re-scored in process; enough for any top-k the API allows (20). */
const CANDIDATES = 60;
/** A synonym found instead of the caller's own word counts this much of the word's weight. */
const SYNONYM_CREDIT = 0.8;
/** In question coverage, the caller's side's share; the phrasing's own words said make up the rest. */
const FORWARD_SHARE = 0.85;
/** Up to this many segments in scope, every segment sharing a term with the query is ranked. */
const SMALL_SCOPE = 3000;
/** In a larger scope, how many single-term matches are ranked when two-word matches are too few. */
const FALLBACK_SAMPLE = 200;
/** Above this many embedded segments the vector side only re-scores the full-text candidates. */
const MAX_VECTOR_SCAN = 5000;

/** A caller's word replaced by the dictionary counts fully; a synonym this much of the word's weight. */
const creditOf = (term: QueryTerm, alternative: string) =>
  term.spoken.includes(alternative) ? 1 : SYNONYM_CREDIT;

/**
 * A term absent from every segment searched weighs as a term found in one segment, times this: a
 * caller's word the base never uses is evidence the base does not answer (天气 in a broadband FAQ),
 * but often only a word said differently, so it must not outweigh the words that did match.
 */
const ABSENT_FACTOR = 0.8;

/**
 * Each term's weight for this base: its length weight times its IDF (BM25), so a word most segments
 * contain (宽带 in a broadband FAQ) counts little and a rare one (光猫) a lot. A term the base lacks
 * but whose synonym it has weighs as that synonym.
 */
export function weighTerms(terms: QueryTerm[], stats: TermStats): number[] {
  const absent = idf(stats, 1) * ABSENT_FACTOR;
  return terms.map((t) => {
    if (t.bigram) {
      // A bigram is no more frequent than its rarer character.
      const df = Math.min(...[...t.term].map((c) => stats.df.get(c) ?? 0));
      return t.weight * (df === 0 ? absent : idf(stats, df));
    }
    let df = stats.df.get(t.term) ?? 0;
    // A phrase is no more frequent than its rarest word.
    if (df === 0 && t.substring) df = Math.min(...segmentWords(t.term).map((w) => stats.df.get(w) ?? 0));
    if (df === 0) for (const a of t.alternatives) df = Math.max(df, stats.df.get(a) ?? 0);
    return t.weight * (df === 0 ? absent : idf(stats, df));
  });
}

/** The weighted share of the query's terms that `present` says a text contains. */
function coverage(
  terms: QueryTerm[],
  weights: number[],
  present: (term: string) => boolean,
  text: string,
  explain?: MatchedTerm[],
): number {
  let total = 0;
  let matched = 0;
  terms.forEach((t, i) => {
    const w = weights[i]!;
    total += w;
    const has = (word: string) => present(word) || (t.substring === true && text.includes(word));
    if (t.bigram ? text.includes(t.term) : has(t.term)) {
      matched += w;
      explain?.push({ term: t.term, weight: w, via: null });
      return;
    }
    const alternative = t.alternatives.find(has);
    if (alternative) {
      matched += creditOf(t, alternative) * w;
      explain?.push({ term: t.term, weight: creditOf(t, alternative) * w, via: alternative });
    }
  });
  if (explain)
    for (const e of explain) e.weight = total === 0 ? 0 : Math.round((e.weight / total) * 1000) / 1000;
  return total === 0 ? 0 : matched / total;
}

/**
 * The most coverage() can be for a text: a term found as a substring. Every index term of a text
 * is a substring of it, lower-cased, so a phrasing whose bound is no better than the best
 * coverage so far is skipped without segmenting it.
 */
function coverageBound(terms: QueryTerm[], weights: number[], text: string): number {
  const lower = text.toLowerCase();
  return coverage(terms, weights, (term) => lower.includes(term), lower);
}

/**
 * How well one phrasing of a pair's question (the question or one of its similar questions) and
 * the caller's question cover each other: mostly the share of the caller's terms the phrasing
 * contains, partly the share of the phrasing's own words the caller said (a pair whose key word the
 * caller never said is a weaker match than one whose every word was said). The best phrasing wins.
 */
function questionCoverage(
  terms: QueryTerm[],
  weights: number[],
  phrasings: string[],
  said: ReadonlySet<string>,
  stats: TermStats,
): number {
  let best = 0;
  const bounded = phrasings
    .map((text) => ({ text, bound: coverageBound(terms, weights, text) }))
    .sort((a, b) => b.bound - a.bound);
  for (const { text, bound } of bounded) {
    if (bound * FORWARD_SHARE + (1 - FORWARD_SHARE) <= best) break;
    const words = indexTerms(text).split(' ');
    const present = new Set(words);
    const forward = coverage(terms, weights, (term) => present.has(term), text.toLowerCase());
    let total = 0;
    let found = 0;
    // The phrasing's own words, less what a caller wraps a question in (您好、我想问一下).
    for (const word of new Set(indexTerms(withoutFillers(text)).split(' '))) {
      if (word.length < 2 || isStopWord(word)) continue;
      const w = idf(stats, stats.df.get(word) ?? 1);
      total += w;
      if (said.has(word)) found += w;
    }
    const backward = total === 0 ? forward : found / total;
    best = Math.max(best, FORWARD_SHARE * forward + (1 - FORWARD_SHARE) * backward);
    if (best >= 1) break;
  }
  return best;
}

/** Every word the caller said or meant: terms, their synonyms and the words the dictionary replaced. */
const saidWords = (terms: QueryTerm[]) =>
  new Set(terms.flatMap((t) => [t.term, ...t.alternatives, ...t.spoken]));

/** Quoted lexemes OR-ed together; quoting keeps to_tsquery from reading operators in user text. */
const lexeme = (w: string) => `'${w.replaceAll("'", "''").replaceAll('\\', '')}'`;
const orQuery = (terms: QueryTerm[]) =>
  terms
    .filter((t) => !t.bigram)
    .flatMap(({ term, alternatives, substring }) =>
      [term, ...alternatives].flatMap((w) => (substring ? [w, ...segmentWords(w)] : [w])).map(lexeme),
    )
    .join(' | ');

/** Words a large scope's candidate query pairs up: the most specific ones (by IDF weight). */
const PAIR_WORDS = 6;

/** The query's words (not characters or bigrams), most specific first, at most `max`. */
function specificWords(terms: QueryTerm[], weights: number[], max: number): QueryTerm[] {
  return terms
    .map((t, i) => ({ t, w: weights[i]! }))
    .filter(({ t }) => t.weight >= 0.5 && !t.bigram)
    .sort((a, b) => b.w - a.w)
    .slice(0, max)
    .map(({ t }) => t);
}

/** "At least two of the query's words": every pair AND-ed, the pairs OR-ed. */
function twoWordQuery(terms: QueryTerm[]): string | undefined {
  // The callers' own words only: with synonyms the pairs multiply and so does the work.
  const words = terms.map((t) => lexeme(t.term));
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
  const words = options.terms ?? analyzeQuery(options.query).terms;
  const done = (segments: RankedSegment[]): RetrieveResult => ({
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

  const stats = await termStats(db, options.knowledgeBaseIds, options.revisions);
  const weights = weighTerms(words, stats);
  const large =
    words.length > 0 && (await scopeSize(db, options.projectId, options.knowledgeBaseIds)) > SMALL_SCOPE;
  // A large scope is ranked by its specific words only: ts_rank_cd's work grows with the query.
  const rankBy = large ? specificWords(words, weights, PAIR_WORDS) : words;
  const anyTerm = sql`to_tsquery('simple', ${orQuery(rankBy.length > 0 ? rankBy : words)})`;
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
    if (!large) {
      // A small scope is ranked whole: every segment sharing a word or a character is a candidate.
      lexicalRows = await ranked(sql`${knowledgeSegments.termsVector} @@ ${anyTerm}`, CANDIDATES);
    } else {
      // In a large scope a frequent word or character matches thousands of segments, and ranking
      // them all costs far more than the budget. Candidates must then share at least two of the
      // query's words (pairs AND-ed, OR-ed together; the GIN index intersects them cheaply); only
      // when that finds too few does a single shared term suffice, over a capped sample.
      const pairs = twoWordQuery(rankBy);
      if (pairs)
        lexicalRows = await ranked(
          sql`${knowledgeSegments.termsVector} @@ to_tsquery('simple', ${pairs})`,
          CANDIDATES,
        );
      if (lexicalRows.length < options.topK) {
        // Words only: a lone character is too weak a signal to sample a large scope by.
        const anyWord = rankBy.map((t) => lexeme(t.term)).join(' | ');
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

  const said = saidWords(words);
  const hidden = options.hidePhrasing;
  const lexical = (row: Row) => {
    let terms = row.terms;
    let similar = row.similarQuestions;
    if (hidden && hidden.segmentId === row.id) {
      similar = similar.filter((q) => q !== hidden.text);
      terms = indexTerms([row.content, ...similar].join('\n'));
    }
    const present = new Set(terms.split(' '));
    const explain: MatchedTerm[] = [];
    const text = [row.content, ...similar].join('\n').toLowerCase();
    const all = coverage(words, weights, (term) => present.has(term), text, explain);
    if (row.question === null) return { score: all, explain };
    return {
      score: 0.5 * all + 0.5 * questionCoverage(words, weights, [row.question, ...similar], said, stats),
      explain,
    };
  };

  if (options.excludeIds) lexicalRows = lexicalRows.filter((r) => !options.excludeIds!.has(r.id));
  const candidates = new Map<string, { row: Row; lexical: number; explain: MatchedTerm[]; order: number }>();
  lexicalRows.forEach((row, order) => {
    const { score, explain } = lexical(row);
    candidates.set(row.id, { row, lexical: score, explain, order });
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
        if (candidates.has(row.id) || options.excludeIds?.has(row.id)) continue;
        const { score, explain } = lexical(row);
        candidates.set(row.id, { row, lexical: score, explain, order: CANDIDATES });
      }
    }
  }

  const scored = [...candidates.values()].map(({ row, lexical: lex, explain, order }) => ({
    order,
    segment: {
      id: row.id,
      knowledgeBaseId: row.knowledgeBaseId,
      documentId: row.documentId,
      documentName: row.documentName,
      content: row.content,
      question: row.question,
      answer: row.answer,
      matchedTerms: explain,
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
