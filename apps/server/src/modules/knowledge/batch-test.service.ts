import { randomUUID } from 'node:crypto';
import {
  type HitTestSegment,
  KNOWLEDGE_BATCH_MAX_QUESTIONS,
  type KnowledgeBatchComparison,
  type KnowledgeBatchItem,
  type KnowledgeBatchMetrics,
  type KnowledgeBatchOutcome,
  type KnowledgeBatchTest,
  type Paged,
} from '@callpilot/contracts';
import { and, asc, count, desc, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { knowledgeBatchItems, knowledgeBatchTests, llmProviders } from '../../db/schema';
import { AppError, badRequest, notFound } from '../../lib/errors';
import type { DownloadFile } from '../../lib/reply';
import { CSV_CONTENT_TYPE, csvFile } from '../../lib/spreadsheet';
import { getKnowledgeBase } from './knowledge.service';
import { readSheetRows } from './sheet-rows';

export const BATCH_MAX_FILE_BYTES = 5 * 1024 * 1024;
const QUESTION_MAX_CHARS = 200;
const EXPECTED_HEADERS = ['期望答案', '答案', '标准答案', '期望回答'];
const FILE_RULE = '请上传 .csv 或 .xlsx 文件，第一行为表头，含“问题”列（可选“期望答案”列）';

export type SkippedRow = { row: number; question: string; reason: string };
export type BatchQuestion = { question: string; expected: string | null };
export type BatchSheet = { questions: BatchQuestion[]; skipped: SkippedRow[] };

/**
 * The questions of an uploaded list. Row numbers are the file's own, so a skipped row can be
 * found there; a blank expected answer means the question should be refused.
 */
export async function parseBatchFile(
  fileName: string,
  bytes: Buffer,
  truncated = false,
): Promise<BatchSheet> {
  if (truncated || bytes.length > BATCH_MAX_FILE_BYTES)
    throw new AppError(413, 'PAYLOAD_TOO_LARGE', '字段 file：文件超过 5 MB，请拆分后分批测试');
  const all = await readSheetRows(fileName, bytes, FILE_RULE);
  const [header, ...data] = all;
  if (!header) throw badRequest(`字段 file：文件为空，${FILE_RULE}`);
  const names = header.cells.map((c) => c.trim());
  const questionCol = names.indexOf('问题');
  if (questionCol < 0) throw badRequest(`字段 file：表头缺少“问题”列，${FILE_RULE}`);
  const expectedCol = names.findIndex((n) => EXPECTED_HEADERS.includes(n));
  if (data.length === 0) throw badRequest('字段 file：文件中只有表头，没有要测试的问题');
  const questions: BatchQuestion[] = [];
  const skipped: SkippedRow[] = [];
  for (const row of data) {
    const question = (row.cells[questionCol] ?? '').trim();
    const expected = expectedCol < 0 ? '' : (row.cells[expectedCol] ?? '').trim();
    if (question === '') skipped.push({ row: row.n, question, reason: '问题为空' });
    else if ([...question].length > QUESTION_MAX_CHARS)
      skipped.push({ row: row.n, question, reason: `问题超过 ${QUESTION_MAX_CHARS} 个字符` });
    else questions.push({ question, expected: expected === '' ? null : expected });
  }
  if (questions.length > KNOWLEDGE_BATCH_MAX_QUESTIONS)
    throw badRequest(`字段 file：一次最多测试 ${KNOWLEDGE_BATCH_MAX_QUESTIONS} 个问题，请拆分后分批测试`);
  if (questions.length === 0) throw badRequest('字段 file：没有可测试的问题，“问题”列不能全部为空');
  return { questions, skipped };
}

export type BatchTestInput = {
  fileName: string;
  sheet: BatchSheet;
  threshold: number;
  topK: number;
  llmProviderId?: string;
  createdBy?: string;
};

export async function createBatchTest(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  input: BatchTestInput,
): Promise<KnowledgeBatchTest> {
  await getKnowledgeBase(db, projectId, knowledgeBaseId);
  if (input.llmProviderId) {
    const [provider] = await db
      .select({ id: llmProviders.id })
      .from(llmProviders)
      .where(and(eq(llmProviders.id, input.llmProviderId), eq(llmProviders.projectId, projectId)));
    if (!provider) throw badRequest('字段 llmProviderId：模型配置不存在，请重新选择');
  }
  const id = randomUUID();
  await db.transaction(async (tx) => {
    await tx.insert(knowledgeBatchTests).values({
      id,
      projectId,
      knowledgeBaseId,
      fileName: input.fileName,
      threshold: input.threshold,
      topK: input.topK,
      llmProviderId: input.llmProviderId ?? null,
      skippedRows: input.sheet.skipped,
      createdBy: input.createdBy ?? null,
    });
    const rows = input.sheet.questions.map((q, i) => ({ testId: id, position: i + 1, ...q }));
    for (let i = 0; i < rows.length; i += 500)
      await tx.insert(knowledgeBatchItems).values(rows.slice(i, i + 500));
  });
  return getBatchTest(db, projectId, knowledgeBaseId, id);
}

// ---------------------------------------------------------------------------------------------
// Judging one question
// ---------------------------------------------------------------------------------------------

/** Both sides compared without spacing, punctuation, width or case getting in the way. */
export const normalizeAnswer = (text: string) =>
  text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}\s]/gu, '');

/** Whether a segment says what the expected answer says. */
export function segmentMatches(
  segment: Pick<HitTestSegment, 'content' | 'question' | 'answer'>,
  expected: string,
) {
  const want = normalizeAnswer(expected);
  if (want === '') return false;
  const answer = segment.answer == null ? '' : normalizeAnswer(segment.answer);
  const question = segment.question == null ? '' : normalizeAnswer(segment.question);
  if (answer !== '' && (answer.includes(want) || want.includes(answer))) return true;
  if (question !== '' && want === question) return true;
  return normalizeAnswer(segment.content).includes(want);
}

export type Judgement = {
  outcome: KnowledgeBatchOutcome;
  expectedRank: number | null;
  topSegmentId: string | null;
  topText: string | null;
};

export function judge(
  expected: string | null,
  answer: { answered: boolean; segments: Pick<HitTestSegment, 'id' | 'content' | 'question' | 'answer'>[] },
): Judgement {
  const top = answer.segments[0];
  const topText = top ? (top.question ?? [...top.content].slice(0, 80).join('')) : null;
  const base = { topSegmentId: top?.id ?? null, topText };
  if (expected === null || expected.trim() === '') {
    return {
      ...base,
      expectedRank: null,
      outcome: answer.answered ? 'answered_unanswerable' : 'refused_correctly',
    };
  }
  const index = answer.segments.findIndex((s) => segmentMatches(s, expected));
  const expectedRank = index < 0 ? null : index + 1;
  const outcome = !answer.answered ? 'refused' : expectedRank === 1 ? 'correct' : 'wrong';
  return { ...base, expectedRank, outcome };
}

// ---------------------------------------------------------------------------------------------
// Reading runs
// ---------------------------------------------------------------------------------------------

type ItemTally = {
  total: number;
  answerable: number;
  judgedAnswerable: number;
  judgedUnanswerable: number;
  judged: number;
  at1: number;
  at3: number;
  outcomes: Partial<Record<KnowledgeBatchOutcome, number>>;
};

const emptyTally = (): ItemTally => ({
  total: 0,
  answerable: 0,
  judgedAnswerable: 0,
  judgedUnanswerable: 0,
  judged: 0,
  at1: 0,
  at3: 0,
  outcomes: {},
});

/** Per run: how many questions, how many judged so far, and how they came out (one query for a page). */
async function tallies(db: Database, testIds: string[]): Promise<Map<string, ItemTally>> {
  const out = new Map<string, ItemTally>();
  if (testIds.length === 0) return out;
  const answerable = sql<boolean>`${knowledgeBatchItems.expected} is not null`;
  const rows = await db
    .select({
      testId: knowledgeBatchItems.testId,
      answerable,
      outcome: knowledgeBatchItems.outcome,
      n: count(),
      at1: sql<number>`count(*) filter (where ${knowledgeBatchItems.expectedRank} = 1)`.mapWith(Number),
      at3: sql<number>`count(*) filter (where ${knowledgeBatchItems.expectedRank} <= 3)`.mapWith(Number),
    })
    .from(knowledgeBatchItems)
    .where(inArray(knowledgeBatchItems.testId, testIds))
    .groupBy(knowledgeBatchItems.testId, answerable, knowledgeBatchItems.outcome);
  for (const row of rows) {
    const t = out.get(row.testId) ?? emptyTally();
    out.set(row.testId, t);
    t.total += row.n;
    if (row.answerable) t.answerable += row.n;
    if (row.outcome) {
      t.judged += row.n;
      t.outcomes[row.outcome] = (t.outcomes[row.outcome] ?? 0) + row.n;
      if (row.answerable) {
        t.judgedAnswerable += row.n;
        t.at1 += row.at1;
        t.at3 += row.at3;
      } else t.judgedUnanswerable += row.n;
    }
  }
  return out;
}

const rate = (n: number, of: number) => (of === 0 ? 0 : Math.round((n / of) * 10000) / 10000);

/**
 * The run's figures. Rates are over the questions judged so far, so a running test shows
 * meaningful figures that settle as it finishes; recall counts an answerable question whether or
 * not it was refused, to tell ranking from refusing.
 */
export function metricsOf(t: ItemTally): KnowledgeBatchMetrics {
  const o = (k: KnowledgeBatchOutcome) => t.outcomes[k] ?? 0;
  return {
    total: t.total,
    answerable: t.answerable,
    unanswerable: t.total - t.answerable,
    recallAt1: rate(t.at1, t.judgedAnswerable),
    recallAt3: rate(t.at3, t.judgedAnswerable),
    correct: o('correct'),
    wrong: o('wrong'),
    refused: o('refused'),
    refusedCorrectly: o('refused_correctly'),
    answeredUnanswerable: o('answered_unanswerable'),
    wrongRate: rate(o('wrong'), t.judgedAnswerable),
    unanswerableAnsweredRate: rate(o('answered_unanswerable'), t.judgedUnanswerable),
  };
}

type TestRow = typeof knowledgeBatchTests.$inferSelect;

function toTest(row: TestRow, tally: ItemTally): KnowledgeBatchTest {
  const judged = tally.total === 0 ? 0 : Math.floor((tally.judged / tally.total) * 100);
  return {
    id: row.id,
    knowledgeBaseId: row.knowledgeBaseId,
    fileName: row.fileName,
    status: row.status,
    // A failed run shows how far it got.
    progress: row.status === 'done' ? 100 : judged,
    error: row.error,
    skipped: row.skippedRows.length,
    threshold: row.threshold,
    mode: row.mode,
    llmProviderId: row.llmProviderId,
    metrics: metricsOf(tally),
    createdAt: row.createdAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}

async function testRow(db: Database, projectId: string, knowledgeBaseId: string, testId: string) {
  await getKnowledgeBase(db, projectId, knowledgeBaseId);
  const [row] = await db
    .select()
    .from(knowledgeBatchTests)
    .where(
      and(
        eq(knowledgeBatchTests.id, testId),
        eq(knowledgeBatchTests.projectId, projectId),
        eq(knowledgeBatchTests.knowledgeBaseId, knowledgeBaseId),
      ),
    );
  if (!row) throw notFound('批量测试不存在');
  return row;
}

export async function getBatchTest(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  testId: string,
): Promise<KnowledgeBatchTest> {
  const row = await testRow(db, projectId, knowledgeBaseId, testId);
  return toTest(row, (await tallies(db, [row.id])).get(row.id) ?? emptyTally());
}

export async function listBatchTests(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  query: { page: number; pageSize: number },
): Promise<Paged<KnowledgeBatchTest>> {
  await getKnowledgeBase(db, projectId, knowledgeBaseId);
  const where = and(
    eq(knowledgeBatchTests.projectId, projectId),
    eq(knowledgeBatchTests.knowledgeBaseId, knowledgeBaseId),
  );
  const [{ total } = { total: 0 }] = await db
    .select({ total: count() })
    .from(knowledgeBatchTests)
    .where(where);
  const rows = await db
    .select()
    .from(knowledgeBatchTests)
    .where(where)
    .orderBy(desc(knowledgeBatchTests.createdAt), desc(knowledgeBatchTests.id))
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize);
  const byTest = await tallies(
    db,
    rows.map((r) => r.id),
  );
  return {
    items: rows.map((r) => toTest(r, byTest.get(r.id) ?? emptyTally())),
    total,
    page: query.page,
    pageSize: query.pageSize,
  };
}

export async function listBatchItems(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  testId: string,
  query: { page: number; pageSize: number; outcome?: KnowledgeBatchOutcome },
): Promise<Paged<KnowledgeBatchItem>> {
  await testRow(db, projectId, knowledgeBaseId, testId);
  const where = and(
    eq(knowledgeBatchItems.testId, testId),
    query.outcome ? eq(knowledgeBatchItems.outcome, query.outcome) : isNotNull(knowledgeBatchItems.outcome),
  );
  const [{ total } = { total: 0 }] = await db
    .select({ total: count() })
    .from(knowledgeBatchItems)
    .where(where);
  const rows = await db
    .select()
    .from(knowledgeBatchItems)
    .where(where)
    .orderBy(asc(knowledgeBatchItems.position))
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize);
  return {
    items: rows.map((r) => ({
      position: r.position,
      question: r.question,
      expected: r.expected,
      outcome: r.outcome!,
      verdict: r.verdict ?? 'no_match',
      confidence: r.confidence ?? 0,
      expectedRank: r.expectedRank,
      topSegmentId: r.topSegmentId,
      topText: r.topText,
    })),
    total,
    page: query.page,
    pageSize: query.pageSize,
  };
}

const GOOD: KnowledgeBatchOutcome[] = ['correct', 'refused_correctly'];

async function outcomesByQuestion(db: Database, testId: string) {
  const rows = await db
    .select({ question: knowledgeBatchItems.question, outcome: knowledgeBatchItems.outcome })
    .from(knowledgeBatchItems)
    .where(and(eq(knowledgeBatchItems.testId, testId), isNotNull(knowledgeBatchItems.outcome)))
    .orderBy(asc(knowledgeBatchItems.position));
  const map = new Map<string, KnowledgeBatchOutcome>();
  // A question listed twice counts once, by its first row, as an operator reads the file.
  for (const r of rows) if (!map.has(r.question)) map.set(r.question, r.outcome!);
  return map;
}

export async function compareBatchTests(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  testId: string,
  withId: string,
): Promise<KnowledgeBatchComparison> {
  const current = await getBatchTest(db, projectId, knowledgeBaseId, testId);
  const previous = await getBatchTest(db, projectId, knowledgeBaseId, withId);
  const after = await outcomesByQuestion(db, testId);
  const before = await outcomesByQuestion(db, withId);
  const improved: KnowledgeBatchComparison['improved'] = [];
  const regressed: KnowledgeBatchComparison['regressed'] = [];
  let common = 0;
  for (const [question, now] of after) {
    const then = before.get(question);
    if (!then) continue;
    common++;
    const wasGood = GOOD.includes(then);
    const isGood = GOOD.includes(now);
    if (!wasGood && isGood) improved.push({ question, before: then, after: now });
    else if (wasGood && !isGood) regressed.push({ question, before: then, after: now });
  }
  return { current, previous, common, improved, regressed };
}

export async function deleteBatchTest(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  testId: string,
) {
  await testRow(db, projectId, knowledgeBaseId, testId);
  await db.delete(knowledgeBatchTests).where(eq(knowledgeBatchTests.id, testId));
}

/** The shared CSV writer: BOM for Excel, and cells a spreadsheet would run as formulas neutralised. */
const csvDownload = (fileName: string, [header = [], ...rows]: (string | number)[][]): DownloadFile => ({
  fileName,
  contentType: CSV_CONTENT_TYPE,
  body: csvFile(header, rows),
});

export async function skippedRowsCsv(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  testId: string,
): Promise<DownloadFile> {
  const row = await testRow(db, projectId, knowledgeBaseId, testId);
  const stem = row.fileName.replace(/\.[^.]+$/, '');
  return csvDownload(`${stem}-跳过的行.csv`, [
    ['行号', '问题', '原因'],
    ...row.skippedRows.map((s) => [s.row, s.question, s.reason]),
  ]);
}

export const batchTemplateCsv = (): DownloadFile =>
  csvDownload('批量测试模板.csv', [
    ['问题', '期望答案'],
    ['宽带安装需要多久？', '受理后一般在 3 个工作日内上门安装'],
    ['光猫坏了怎么办', '光猫故障可免费上门更换，请先报修'],
    ['你们公司的股票代码是多少', ''],
  ]);
