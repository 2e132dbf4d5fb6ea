// Answer quality on spoken Chinese (issue #19): two knowledge bases of different domains, each
// built through the real indexing path from a Markdown/prose document and a question-answer CSV
// (bench/fixtures/knowledge-spoken), asked the fixture's spoken questions through answerQuestion
// with the assistant's default threshold. Prints recall@1/@3, wrong answers above the threshold and
// unanswerable questions answered, per domain and question kind, for the tuning set and for a
// held-out set written with it but never looked at question by question; the baseline is the same
// run's raw relevance against the same threshold (what the assistant did before calibration).
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { type Database, openDatabase } from '../../apps/server/src/db/client';
import { knowledgeBases, knowledgeDocuments, projects } from '../../apps/server/src/db/schema';
import { answerQuestion } from '../../apps/server/src/modules/knowledge/answer';
import { calibrateBase } from '../../apps/server/src/modules/knowledge/calibrate';
import { drainKnowledgeQueue } from '../../apps/server/src/modules/knowledge/worker';
import { repoRoot } from './lib/paths';
import { type BudgetResult, budget, fmtPct, table } from './lib/report';

const THRESHOLD = 0.3;
const TOP_K = 5;
const dir = path.join(repoRoot, 'bench/fixtures/knowledge-spoken');

interface Question {
  base: string;
  kind: string;
  query: string;
  expected: string | null;
}

const BASES: Record<string, { name: string; files: string[] }> = {
  telecom: { name: '澜江通信', files: ['telecom-faq.md', 'telecom-qa.csv'] },
  retail: { name: '橙集商城', files: ['retail-policy.md', 'retail-qa.csv'] },
};

const squash = (text: string) => text.replace(/\s+/g, '');

async function buildBase(db: Database, projectId: string, key: string): Promise<string> {
  const id = randomUUID();
  await db.insert(knowledgeBases).values({ id, projectId, name: BASES[key]!.name });
  for (const file of BASES[key]!.files) {
    const bytes = fs.readFileSync(path.join(dir, file));
    const fileType = file.endsWith('.csv') ? 'csv' : 'md';
    await db.insert(knowledgeDocuments).values({
      id: randomUUID(),
      projectId,
      knowledgeBaseId: id,
      fileName: file,
      fileType,
      kind: fileType === 'csv' ? 'qa' : 'text',
      sizeBytes: bytes.length,
      content: bytes,
    });
  }
  return id;
}

interface Tally {
  answerable: number;
  at1: number;
  at3: number;
  wrong: number;
  unanswerable: number;
  answeredUnanswerable: number;
  baselineWrong: number;
  baselineAnswered: number;
  answeredRight: number;
}
const empty = (): Tally => ({
  answerable: 0,
  at1: 0,
  at3: 0,
  wrong: 0,
  unanswerable: 0,
  answeredUnanswerable: 0,
  baselineWrong: 0,
  baselineAnswered: 0,
  answeredRight: 0,
});

export interface SpokenResult {
  overall: Tally;
  rows: string[][];
  misses: string[];
}

async function evaluate(
  db: Database,
  projectId: string,
  baseIds: Record<string, string>,
  questions: Question[],
): Promise<SpokenResult> {
  const groups = new Map<string, Tally>();
  const overall = empty();
  const misses: string[] = [];
  for (const q of questions) {
    const answer = await answerQuestion(db, {
      projectId,
      knowledgeBaseIds: [baseIds[q.base]!],
      query: q.query,
      topK: TOP_K,
      threshold: THRESHOLD,
    });
    const rightAt = (i: number) => {
      const s = answer.segments[i];
      return s !== undefined && q.expected !== null && squash(s.content).includes(squash(q.expected));
    };
    const top = answer.segments[0];
    const rawAnswered = top !== undefined && top.relevance >= THRESHOLD;
    for (const key of ['all', `${q.base}`, `${q.base}/${q.kind}`]) {
      const t = key === 'all' ? overall : (groups.get(key) ?? empty());
      if (key !== 'all') groups.set(key, t);
      if (q.expected === null) {
        t.unanswerable++;
        if (answer.answered) t.answeredUnanswerable++;
        if (rawAnswered) t.baselineAnswered++;
      } else {
        t.answerable++;
        if (rightAt(0)) t.at1++;
        if (rightAt(0) || rightAt(1) || rightAt(2)) t.at3++;
        if (answer.answered && !rightAt(0)) t.wrong++;
        if (answer.answered && rightAt(0)) t.answeredRight++;
        if (rawAnswered && !rightAt(0)) t.baselineWrong++;
      }
    }
    const note = `[${q.base}/${q.kind}] ${q.query} → ${top ? (top.question ?? top.content.slice(0, 30)) : '（无）'} (${answer.confidence}, ${answer.verdict})`;
    if (q.expected === null && answer.answered) misses.push(`答了不该答的: ${note}`);
    if (q.expected !== null && !(rightAt(0) || rightAt(1) || rightAt(2)))
      misses.push(`前三未召回: ${note}（应含 ${q.expected}）`);
    else if (q.expected !== null && answer.answered && !rightAt(0))
      misses.push(`答错: ${note}（应含 ${q.expected}）`);
  }
  const ratio = (a: number, b: number) => (b === 0 ? '-' : (a / b).toFixed(3));
  const rows = [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .concat([['all', overall]])
    .map(([key, t]) => [
      key,
      String(t.answerable),
      ratio(t.at1, t.answerable),
      ratio(t.at3, t.answerable),
      ratio(t.answeredRight, t.answerable),
      ratio(t.wrong, t.answerable),
      ratio(t.baselineWrong, t.answerable),
      String(t.unanswerable),
      ratio(t.answeredUnanswerable, t.unanswerable),
      ratio(t.baselineAnswered, t.unanswerable),
    ]);
  return { overall, rows, misses };
}

export async function knowledgeAnswersBenchmark(
  options: { showMisses?: boolean } = {},
): Promise<BudgetResult[]> {
  const client = await PGlite.create();
  const handle = await openDatabase({ kind: 'pglite', client });
  try {
    await handle.migrate();
    const db = handle.db;
    const projectId = randomUUID();
    await db.insert(projects).values({ id: projectId, name: 'bench' });
    const baseIds: Record<string, string> = {};
    for (const key of Object.keys(BASES)) baseIds[key] = await buildBase(db, projectId, key);
    await drainKnowledgeQueue(db);
    for (const id of Object.values(baseIds)) {
      const c = await calibrateBase(db, projectId, id);
      console.log(
        `  calibration ${id.slice(0, 8)}: cut ${c.cut.toFixed(3)} from ${c.positives} right / ${c.negatives} wrong probes (probe recall ${fmtPct(c.recall)}, wrong ${fmtPct(c.wrongRate)})`,
      );
    }
    const header = [
      'group',
      'answerable',
      'recall@1',
      'recall@3',
      'answered right',
      'wrong≥thr',
      'raw wrong',
      'unanswerable',
      'answered',
      'raw answered',
    ];
    const results: BudgetResult[] = [];
    for (const [file, label] of [
      ['questions.json', 'tuning set'],
      ['questions-heldout.json', 'held-out set'],
    ] as const) {
      const questions = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Question[];
      const r = await evaluate(db, projectId, baseIds, questions);
      console.log(
        `  ${label}: ${questions.length} questions (raw = uncalibrated relevance at the same threshold, the baseline)`,
      );
      console.log(table(header, r.rows));
      if (options.showMisses && file === 'questions.json') for (const m of r.misses) console.log(`    ${m}`);
      const t = r.overall;
      results.push(
        budget(
          `knowledge answers (${label}): recall@3 >= 0.90`,
          t.at3 / t.answerable >= 0.9,
          (t.at3 / t.answerable).toFixed(3),
        ),
        budget(
          `knowledge answers (${label}): wrong answers above the threshold <= 10% of answerable`,
          t.wrong / t.answerable <= 0.1,
          `${fmtPct(t.wrong / t.answerable)} (baseline raw score: ${fmtPct(t.baselineWrong / t.answerable)})`,
        ),
        budget(
          `knowledge answers (${label}): unanswerable answered <= 20%`,
          t.answeredUnanswerable / t.unanswerable <= 0.2,
          `${fmtPct(t.answeredUnanswerable / t.unanswerable)} (baseline raw score: ${fmtPct(t.baselineAnswered / t.unanswerable)})`,
        ),
      );
    }
    return results;
  } finally {
    await handle.close();
  }
}
