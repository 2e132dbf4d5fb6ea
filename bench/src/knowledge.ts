// Knowledge-base retrieval, in process on an in-memory PGlite (the embedded default): the latency
// of `retrieve` over 100,000 segments against a primary-key lookup on the same table, and the
// quality (recall@3) of the 105-pair Chinese FAQ fixture queried with paraphrases written for it,
// both as plain pairs (the budget) and with the pairs' similar questions (相似问, informational).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { eq, sql } from 'drizzle-orm';
import Papa from 'papaparse';
import { type Database, openDatabase } from '../../apps/server/src/db/client';
import {
  knowledgeBases,
  knowledgeDocuments,
  knowledgeSegments,
  projects,
} from '../../apps/server/src/db/schema';
import { answerQuestion } from '../../apps/server/src/modules/knowledge/answer';
import { retrieve } from '../../apps/server/src/modules/knowledge/retrieval';
import { indexTerms, segmentWords } from '../../apps/server/src/modules/knowledge/text';
import { drainKnowledgeQueue } from '../../apps/server/src/modules/knowledge/worker';
import { repoRoot } from './lib/paths';
import { type BudgetResult, budget, fmtInt, fmtRatio, table } from './lib/report';

const SEGMENTS = 100_000;
const P95_BUDGET_MS = 20;
const RECALL_BUDGET = 0.9;
const ROUNDS = 3;
const TOP_K = 3;

interface FaqPair {
  question: string;
  answer: string;
  /**
   * Other phrasings an ops team would list for the question (相似问), written from the question
   * and answer alone, without looking at `query` or `heldOutQuery`.
   */
  similarQuestions: string[];
  /** The paraphrase the budget is judged on. */
  query: string;
  /**
   * A second paraphrase, written after the synonym list (synonyms.ts) was settled and never used
   * to tune it: the honest estimate for questions nobody tuned for.
   */
  heldOutQuery: string;
}

const fixturePath = path.join(repoRoot, 'bench/fixtures/knowledge-faq.json');

/** A deterministic generator, so every run searches the same corpus. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * Distractor segments that look like Chinese prose to the index: words drawn with a Zipf
 * distribution from the fixture's own vocabulary mixed into 20,000 synthetic words, so the
 * queries' words are frequent in the corpus (the hard case for an inverted index), not absent.
 */
function distractors(pairs: FaqPair[], count: number): string[] {
  const random = rng(42);
  const fixtureWords = [...new Set(pairs.flatMap((p) => segmentWords(`${p.question}${p.answer}`)))];
  const synthetic: string[] = [];
  for (let i = 0; i < 20_000; i++) {
    const length = 2 + Math.floor(random() * 2);
    let word = '';
    for (let j = 0; j < length; j++) word += String.fromCharCode(0x4e00 + Math.floor(random() * 3500));
    synthetic.push(word);
  }
  const vocabulary = [...fixtureWords, ...synthetic];
  for (let i = vocabulary.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [vocabulary[i], vocabulary[j]] = [vocabulary[j]!, vocabulary[i]!];
  }
  // Inverse-CDF sampling of Zipf(1) over the shuffled vocabulary.
  const cumulative: number[] = [];
  let total = 0;
  for (let r = 1; r <= vocabulary.length; r++) {
    total += 1 / r;
    cumulative.push(total);
  }
  const pick = () => {
    const x = random() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return vocabulary[lo]!;
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const words = 20 + Math.floor(random() * 60);
    let text = '';
    for (let w = 0; w < words; w++) text += pick() + (random() < 0.1 ? '。' : '');
    out.push(text);
  }
  return out;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

async function timeEach(times: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await fn(i);
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b);
}

/**
 * Uploads the fixture as a csv document and lets the real indexing path turn it into segments;
 * with `similar`, the pairs' similar questions go in a 相似问题 column, one a line.
 */
async function faqBase(db: Database, projectId: string, pairs: FaqPair[], similar = false): Promise<string> {
  const baseId = randomUUID();
  await db.insert(knowledgeBases).values({ id: baseId, projectId, name: similar ? 'FAQ 相似问' : 'FAQ' });
  const csv = similar
    ? Papa.unparse({
        fields: ['问题', '答案', '相似问题'],
        data: pairs.map((p) => [p.question, p.answer, p.similarQuestions.join('\n')]),
      })
    : Papa.unparse({ fields: ['问题', '答案'], data: pairs.map((p) => [p.question, p.answer]) });
  await db.insert(knowledgeDocuments).values({
    id: randomUUID(),
    projectId,
    knowledgeBaseId: baseId,
    fileName: 'faq.csv',
    fileType: 'csv',
    kind: 'qa',
    sizeBytes: Buffer.byteLength(csv),
    content: Buffer.from(csv),
  });
  return baseId;
}

function recall(
  pairs: FaqPair[],
  results: { question: string | null }[][],
  key: 'query' | 'heldOutQuery' = 'query',
) {
  let at1 = 0;
  let at3 = 0;
  const misses: string[] = [];
  pairs.forEach((pair, i) => {
    const questions = results[i]!.map((s) => s.question);
    if (questions[0] === pair.question) at1++;
    if (questions.slice(0, 3).includes(pair.question)) at3++;
    else misses.push(`${pair[key]} → ${questions[0] ?? '（无）'}（应为 ${pair.question}）`);
  });
  return { at1: at1 / pairs.length, at3: at3 / pairs.length, misses };
}

export async function knowledgeBenchmark(): Promise<BudgetResult[]> {
  const pairs = JSON.parse(fs.readFileSync(fixturePath, 'utf8')) as FaqPair[];
  const client = await PGlite.create();
  const handle = await openDatabase({ kind: 'pglite', client });
  try {
    await handle.migrate();
    const db = handle.db;
    const projectId = randomUUID();
    await db.insert(projects).values({ id: projectId, name: 'bench' });

    // Quality: the FAQ alone, as a project would upload it: plain pairs, and pairs with their
    // similar questions (相似问).
    const faqId = await faqBase(db, projectId, pairs);
    const similarId = await faqBase(db, projectId, pairs, true);
    await drainKnowledgeQueue(db);
    const recallIn = async (baseId: string, key: 'query' | 'heldOutQuery') => {
      const results = [];
      for (const pair of pairs) {
        results.push(
          (await retrieve(db, { projectId, knowledgeBaseIds: [baseId], query: pair[key], topK: TOP_K }))
            .segments,
        );
      }
      return recall(pairs, results, key);
    };
    const quality = await recallIn(faqId, 'query');
    const heldOut = await recallIn(faqId, 'heldOutQuery');
    const similarQuality = await recallIn(similarId, 'query');
    const similarHeldOut = await recallIn(similarId, 'heldOutQuery');
    const similarCount = pairs.reduce((n, p) => n + p.similarQuestions.length, 0);

    // Scale: the same FAQ plus 100,000 distractor segments in one base.
    const bigId = await faqBase(db, projectId, pairs);
    await drainKnowledgeQueue(db);
    const documentId = randomUUID();
    await db.insert(knowledgeDocuments).values({
      id: documentId,
      projectId,
      knowledgeBaseId: bigId,
      fileName: 'corpus.txt',
      fileType: 'txt',
      kind: 'text',
      sizeBytes: 0,
      content: Buffer.alloc(0),
      status: 'ready',
    });
    let started = performance.now();
    const texts = distractors(pairs, SEGMENTS);
    const rows = texts.map((content, position) => ({
      id: randomUUID(),
      projectId,
      knowledgeBaseId: bigId,
      documentId,
      position,
      content,
      terms: indexTerms(content),
    }));
    const segmentMs = performance.now() - started;
    started = performance.now();
    // Multi-row inserts; the tsvector column and its GIN index fill themselves.
    for (let i = 0; i < rows.length; i += 1000)
      await db.insert(knowledgeSegments).values(rows.slice(i, i + 1000));
    await client.exec('ANALYZE knowledge_segments');
    const loadMs = performance.now() - started;
    const [{ n } = { n: 0 }] = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(knowledgeSegments)
      .where(eq(knowledgeSegments.knowledgeBaseId, bigId));
    console.log(
      `  corpus: ${fmtInt(n)} segments (jieba ${(segmentMs / 1000).toFixed(1)} s, insert + index ${(loadMs / 1000).toFixed(1)} s)`,
    );

    const ids = rows.map((r) => r.id);
    const query = (i: number) => pairs[i % pairs.length]!.query;
    const samples = pairs.length * ROUNDS;
    // Warm both paths (plans, caches, the jieba dictionary) before measuring either.
    for (let i = 0; i < 20; i++) {
      await answerQuestion(db, { projectId, knowledgeBaseIds: [bigId], query: query(i), topK: TOP_K });
      await db
        .select({ id: knowledgeSegments.id })
        .from(knowledgeSegments)
        .where(eq(knowledgeSegments.id, ids[i]!));
    }
    const baseline = await timeEach(samples, (i) =>
      db
        .select({ id: knowledgeSegments.id, content: knowledgeSegments.content })
        .from(knowledgeSegments)
        .where(eq(knowledgeSegments.id, ids[(i * 7919) % ids.length]!)),
    );
    const bigResults: { question: string | null }[][] = [];
    // What a call does per question: answerQuestion (the project's dictionary, the base's
    // calibration and term statistics, ranking and the verdict), not retrieval alone.
    const latency = await timeEach(samples, async (i) => {
      const result = await answerQuestion(db, {
        projectId,
        knowledgeBaseIds: [bigId],
        query: query(i),
        topK: TOP_K,
      });
      if (i < pairs.length) bigResults.push(result.segments);
    });
    const atScale = recall(pairs, bigResults);

    const row = (name: string, s: number[], base: number[]) => [
      name,
      `${percentile(s, 50).toFixed(2)} ms`,
      `${percentile(s, 95).toFixed(2)} ms`,
      `${percentile(s, 99).toFixed(2)} ms`,
      fmtRatio(percentile(s, 95) / percentile(base, 95)),
    ];
    console.log(
      `  ${samples} queries each (${pairs.length} paraphrased questions x ${ROUNDS}), top-${TOP_K}, sequential`,
    );
    console.log(
      table(
        ['operation', 'p50', 'p95', 'p99', 'p95 vs baseline'],
        [
          row('primary-key lookup of a segment (baseline)', baseline, baseline),
          row(`answerQuestion() over ${fmtInt(n)} segments`, latency, baseline),
        ],
      ),
    );
    console.log(
      table(
        ['retrieval quality', 'recall@1', 'recall@3'],
        [
          [`FAQ base alone (${pairs.length} pairs)`, quality.at1.toFixed(3), quality.at3.toFixed(3)],
          ['FAQ base alone, held-out paraphrases', heldOut.at1.toFixed(3), heldOut.at3.toFixed(3)],
          [
            `FAQ with similar questions (${similarCount} 相似问)`,
            similarQuality.at1.toFixed(3),
            similarQuality.at3.toFixed(3),
          ],
          [
            'FAQ with similar questions, held-out paraphrases',
            similarHeldOut.at1.toFixed(3),
            similarHeldOut.at3.toFixed(3),
          ],
          [`FAQ among ${fmtInt(SEGMENTS)} distractors`, atScale.at1.toFixed(3), atScale.at3.toFixed(3)],
        ],
      ),
    );
    // Informational, not a budget: what listing similar questions adds to the same pairs.
    console.log(
      `  with similar questions: recall@1/@3 ${similarQuality.at1.toFixed(3)}/${similarQuality.at3.toFixed(3)} ` +
        `(plain ${quality.at1.toFixed(3)}/${quality.at3.toFixed(3)}), held-out ` +
        `${similarHeldOut.at1.toFixed(3)}/${similarHeldOut.at3.toFixed(3)} ` +
        `(plain ${heldOut.at1.toFixed(3)}/${heldOut.at3.toFixed(3)})`,
    );
    for (const [label, result] of [
      ['paraphrases', quality],
      ['held-out paraphrases', heldOut],
    ] as const) {
      if (result.misses.length === 0) continue;
      console.log(`  misses (FAQ base alone, ${label}):`);
      for (const miss of result.misses) console.log(`    ${miss}`);
    }
    const p95 = percentile(latency, 95);
    return [
      budget(
        `knowledge: retrieval p95 over ${fmtInt(n)} segments <= ${P95_BUDGET_MS} ms`,
        p95 <= P95_BUDGET_MS,
        `${p95.toFixed(2)} ms (${fmtRatio(p95 / percentile(baseline, 95))} the primary-key lookup)`,
      ),
      // Judged on the held-out paraphrases: the first set was what synonyms.ts was tuned on, and
      // the spoken-question budgets (knowledge-answers) now drive the ranking.
      budget(
        `knowledge: recall@3 on the ${pairs.length}-pair FAQ, held-out paraphrases >= ${RECALL_BUDGET}`,
        heldOut.at3 >= RECALL_BUDGET,
        `${heldOut.at3.toFixed(3)} (recall@1 ${heldOut.at1.toFixed(3)}; tuned paraphrases ${quality.at3.toFixed(3)}; ` +
          `among ${fmtInt(SEGMENTS)} distractors ${atScale.at3.toFixed(3)})`,
      ),
    ];
  } finally {
    await handle.close();
  }
}
