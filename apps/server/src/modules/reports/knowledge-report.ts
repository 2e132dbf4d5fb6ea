import {
  type KnowledgeGapResolveRequest,
  type KnowledgeGapResolveResult,
  type KnowledgeGapTopic,
  type KnowledgeReport,
  type KnowledgeReportQuery,
  knowledgeSegmentUpdateRequest,
  type ReportFigure,
  type ReportPoint,
} from '@callpilot/contracts';
import { and, eq, gte, inArray, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import {
  calls,
  knowledgeBases,
  knowledgeDocuments,
  knowledgeGaps,
  knowledgeSegmentHitsHourly,
  knowledgeSegments,
  knowledgeStatsHourly,
} from '../../db/schema';
import { badRequest, notFound } from '../../lib/errors';
import type { SheetValue } from '../../lib/spreadsheet';
import { answerQuestion, type KnowledgeAnswer } from '../knowledge/answer';
import type { Embedder } from '../knowledge/embedder';
import { addPair, updateSegment } from '../knowledge/knowledge.service';
import { groupQuestions, representative } from './knowledge-topics';
import type { ReportSheet } from './report-file';
import { knowledgeSettings, PROJECT_TOTAL, settingOf } from './rollup-knowledge';
import { bucketOf, bucketStarts, drillRange, reportRange } from './rollup-range';

const MAX_TOPICS = 200;
const MAX_EXAMPLES = 5;
/** Candidates a gap is judged on, as an assistant's default 召回条数 (ambiguity needs more than one). */
const GAP_TOP_K = 3;

/**
 * The list a key collects into, created on first use. Pushed to, never spread: a month of a busy
 * project is thousands of gaps, and copying the list per row made the gap list quadratic (seconds
 * over a year's range).
 */
function listIn<K, V>(map: Map<K, V[]>, key: K): V[] {
  let list = map.get(key);
  if (!list) {
    list = [];
    map.set(key, list);
  }
  return list;
}

type Totals = { questions: number; hits: number; noAnswer: number };
const rate = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);

/** The rollup rows of one base, or the project's own rows (PROJECT_TOTAL) without one. */
async function hourlyRows(db: Database, projectId: string, start: Date, end: Date, baseId?: string) {
  return db
    .select({
      hour: knowledgeStatsHourly.hour,
      knowledgeBaseId: knowledgeStatsHourly.knowledgeBaseId,
      questions: knowledgeStatsHourly.questions,
      hits: knowledgeStatsHourly.hits,
      noAnswer: knowledgeStatsHourly.noAnswer,
    })
    .from(knowledgeStatsHourly)
    .where(
      and(
        eq(knowledgeStatsHourly.projectId, projectId),
        gte(knowledgeStatsHourly.hour, start),
        lt(knowledgeStatsHourly.hour, end),
        baseId === undefined ? undefined : eq(knowledgeStatsHourly.knowledgeBaseId, baseId),
      ),
    );
}

const sum = (rows: Totals[]): Totals =>
  rows.reduce(
    (t, r) => ({
      questions: t.questions + r.questions,
      hits: t.hits + r.hits,
      noAnswer: t.noAnswer + r.noAnswer,
    }),
    { questions: 0, hits: 0, noAnswer: 0 },
  );

async function baseNames(db: Database, projectId: string): Promise<Map<string, string>> {
  const rows = await db
    .select({ id: knowledgeBases.id, name: knowledgeBases.name })
    .from(knowledgeBases)
    .where(eq(knowledgeBases.projectId, projectId));
  return new Map(rows.map((r) => [r.id, r.name]));
}

/**
 * 知识库统计 from the hourly rollups. Without a knowledge base the figures count each question
 * once (the project's row), while the table by base counts it in every base it was searched in. The call-record list has no
 * knowledge filter, so a figure's drill is the range's calls (the calls the questions came from
 * are among them), and a rate has none.
 */
export async function knowledgeReport(
  db: Database,
  projectId: string,
  query: KnowledgeReportQuery,
): Promise<KnowledgeReport> {
  const { start, end, previousStart, granularity, drill } = reportRange(query);
  const baseId = query.knowledgeBaseId;
  const [rows, previous, names] = await Promise.all([
    hourlyRows(db, projectId, start, end, baseId),
    hourlyRows(db, projectId, previousStart, start, baseId ?? PROJECT_TOTAL),
    baseNames(db, projectId),
  ]);
  // Figures and trend from the project's row (a question once) or the chosen base's; the table by base.
  const current = rows.filter((r) => r.knowledgeBaseId === (baseId ?? PROJECT_TOTAL));
  const perBase = rows.filter((r) => r.knowledgeBaseId !== PROJECT_TOTAL);
  const now = sum(current);
  const before = sum(previous);
  const figure = (value: number, prev: number, withDrill: boolean): ReportFigure => ({
    value,
    previous: prev,
    drill: withDrill ? drill : null,
    previousDrill: withDrill ? drillRange(previousStart, start) : null,
  });

  const byBase = new Map<string, Totals[]>();
  for (const r of perBase) listIn(byBase, r.knowledgeBaseId).push(r);
  const byKnowledgeBase = [...byBase]
    .map(([id, rows]) => {
      const t = sum(rows);
      return {
        key: id,
        label: names.get(id) ?? '已删除的知识库',
        values: {
          questions: t.questions,
          hits: t.hits,
          noAnswer: t.noAnswer,
          hitRate: rate(t.hits, t.questions),
          noAnswerRate: rate(t.noAnswer, t.questions),
        },
        drill,
      };
    })
    .sort((a, b) => b.values.questions - a.values.questions || a.key.localeCompare(b.key));

  const buckets = new Map<number, Totals[]>();
  for (const r of current) {
    listIn(buckets, bucketOf(r.hour, granularity)).push(r);
  }
  const points: ReportPoint[] = [];
  for (const at of bucketStarts({ start, end, granularity })) {
    const t = sum(buckets.get(at.getTime()) ?? []);
    points.push({
      at: at.toISOString(),
      values: { ...t, hitRate: rate(t.hits, t.questions), noAnswerRate: rate(t.noAnswer, t.questions) },
    });
  }

  return {
    figures: {
      questions: figure(now.questions, before.questions, true),
      hitRate: figure(rate(now.hits, now.questions), rate(before.hits, before.questions), false),
      noAnswerRate: figure(rate(now.noAnswer, now.questions), rate(before.noAnswer, before.questions), false),
    },
    byKnowledgeBase,
    trend: { granularity, points },
    topSegments: await topSegments(db, projectId, start, end, baseId),
  };
}

/**
 * The segments that answered most questions in the range, from the segment-hit rollup; their
 * document and text as they are now (a segment deleted since says so).
 */
async function topSegments(db: Database, projectId: string, start: Date, end: Date, baseId?: string) {
  const top = await db
    .select({
      segmentId: knowledgeSegmentHitsHourly.segmentId,
      knowledgeBaseId: knowledgeSegmentHitsHourly.knowledgeBaseId,
      hits: sql<number>`sum(${knowledgeSegmentHitsHourly.hits})::int`,
    })
    .from(knowledgeSegmentHitsHourly)
    .where(
      and(
        eq(knowledgeSegmentHitsHourly.projectId, projectId),
        gte(knowledgeSegmentHitsHourly.hour, start),
        lt(knowledgeSegmentHitsHourly.hour, end),
        baseId ? eq(knowledgeSegmentHitsHourly.knowledgeBaseId, baseId) : undefined,
      ),
    )
    .groupBy(knowledgeSegmentHitsHourly.segmentId, knowledgeSegmentHitsHourly.knowledgeBaseId)
    .orderBy(sql`3 desc`, knowledgeSegmentHitsHourly.segmentId)
    .limit(10);
  if (top.length === 0) return [];
  const segments = await db
    .select({
      id: knowledgeSegments.id,
      content: knowledgeSegments.content,
      documentName: knowledgeDocuments.fileName,
    })
    .from(knowledgeSegments)
    .innerJoin(knowledgeDocuments, eq(knowledgeDocuments.id, knowledgeSegments.documentId))
    .where(
      and(
        eq(knowledgeSegments.projectId, projectId),
        inArray(
          knowledgeSegments.id,
          top.map((t) => t.segmentId),
        ),
      ),
    );
  const byId = new Map(segments.map((s) => [s.id, s]));
  return top.map((t) => ({
    segmentId: t.segmentId,
    knowledgeBaseId: t.knowledgeBaseId,
    documentName: byId.get(t.segmentId)?.documentName ?? '（分段已删除）',
    content: byId.get(t.segmentId)?.content ?? '',
    hits: Number(t.hits),
  }));
}

type GapRow = {
  callId: string;
  turnIndex: number;
  knowledgeBaseId: string;
  question: string;
  askedAt: Date;
  assistantId: string | null;
  assistantVersion: number | null;
};

/**
 * 知识缺口: the unanswered questions of the range grouped into topics per knowledge base (most
 * asked first). Before a topic is listed its representative question goes through the base's
 * retrieval as it is now: if a segment clears the threshold the calls ran with, the gap has been
 * filled and the topic is left out; otherwise the best segment, if it is a pair, is the suggestion.
 */
export async function listKnowledgeGaps(
  db: Database,
  projectId: string,
  query: Pick<KnowledgeReportQuery, 'from' | 'to' | 'knowledgeBaseId'>,
  embedder?: Embedder,
): Promise<{ topics: KnowledgeGapTopic[]; total: number }> {
  const { start, end } = reportRange({ ...query, granularity: 'day' });
  const rows: GapRow[] = await db
    .select({
      callId: knowledgeGaps.callId,
      turnIndex: knowledgeGaps.turnIndex,
      knowledgeBaseId: knowledgeGaps.knowledgeBaseId,
      question: knowledgeGaps.question,
      askedAt: knowledgeGaps.askedAt,
      assistantId: calls.assistantId,
      assistantVersion: calls.assistantVersion,
    })
    .from(knowledgeGaps)
    .innerJoin(calls, eq(calls.id, knowledgeGaps.callId))
    .innerJoin(knowledgeBases, eq(knowledgeBases.id, knowledgeGaps.knowledgeBaseId))
    .where(
      and(
        eq(knowledgeGaps.projectId, projectId),
        eq(knowledgeBases.projectId, projectId),
        gte(knowledgeGaps.hour, start),
        lt(knowledgeGaps.hour, end),
        query.knowledgeBaseId ? eq(knowledgeGaps.knowledgeBaseId, query.knowledgeBaseId) : undefined,
      ),
    )
    .orderBy(
      knowledgeGaps.askedAt,
      knowledgeGaps.callId,
      knowledgeGaps.turnIndex,
      knowledgeGaps.knowledgeBaseId,
    );
  if (rows.length === 0) return { topics: [], total: 0 };
  const [settings, names] = await Promise.all([knowledgeSettings(db, rows), baseNames(db, projectId)]);

  const perBase = new Map<string, GapRow[]>();
  for (const r of rows) listIn(perBase, r.knowledgeBaseId).push(r);

  // One judgement per base, wording and threshold in this request, however many topics share it.
  const searched = new Map<string, KnowledgeAnswer>();
  const judgedNow = async (baseId: string, question: string, threshold: number) => {
    const key = `${baseId}\u0000${threshold}\u0000${question}`;
    if (!searched.has(key)) {
      // Judged as a call would judge it now: a gap stays open until the base answers it.
      const found = await answerQuestion(db, {
        projectId,
        knowledgeBaseIds: [baseId],
        query: question,
        topK: GAP_TOP_K,
        threshold,
        embedder,
      });
      searched.set(key, found);
    }
    return searched.get(key)!;
  };

  const topics: KnowledgeGapTopic[] = [];
  for (const [baseId, gaps] of perBase) {
    for (const members of groupQuestions(gaps)) {
      const rep = representative(members);
      // Reduced, not spread: a topic of a year's range can outgrow the engine's argument limit.
      const threshold = members.reduce((max, m) => Math.max(max, settingOf(settings, m).scoreThreshold), 0);
      const now = await judgedNow(baseId, rep.question, threshold);
      if (now.answered) continue;
      const best = now.segments[0] ?? null;
      topics.push({
        id: `${baseId}:${rep.callId}:${rep.turnIndex}`,
        knowledgeBaseId: baseId,
        knowledgeBaseName: names.get(baseId) ?? '',
        question: rep.question,
        count: members.length,
        examples: [...members]
          .sort((a, b) => b.askedAt.getTime() - a.askedAt.getTime())
          .slice(0, MAX_EXAMPLES)
          .map((m) => ({
            callId: m.callId,
            turnIndex: m.turnIndex,
            question: m.question,
            askedAt: m.askedAt.toISOString(),
          })),
        suggestedPair:
          best && best.question !== null && best.score > 0
            ? { documentId: best.documentId, segmentId: best.id, question: best.question, score: best.score }
            : null,
      });
    }
  }
  topics.sort(
    (a, b) =>
      b.count - a.count || a.knowledgeBaseName.localeCompare(b.knowledgeBaseName) || a.id.localeCompare(b.id),
  );
  return { topics: topics.slice(0, MAX_TOPICS), total: topics.length };
}

/**
 * 添加为相似问 / 新建问答对: through the knowledge service's own writes (same validation, search
 * terms rebuilt at once), so the next retrieval of the question finds the pair.
 */
export async function resolveKnowledgeGap(
  db: Database,
  projectId: string,
  body: KnowledgeGapResolveRequest,
  embedder?: Embedder,
): Promise<KnowledgeGapResolveResult> {
  if (body.as === 'pair') {
    const pair = await addPair(db, projectId, body.knowledgeBaseId, body, embedder);
    return { segmentId: pair.id, knowledgeBaseId: body.knowledgeBaseId };
  }
  const segmentId = body.segmentId ?? body.documentId;
  const [pair] = await db
    .select({
      id: knowledgeSegments.id,
      knowledgeBaseId: knowledgeSegments.knowledgeBaseId,
      documentId: knowledgeSegments.documentId,
      question: knowledgeSegments.question,
      similarQuestions: knowledgeSegments.similarQuestions,
    })
    .from(knowledgeSegments)
    .where(and(eq(knowledgeSegments.id, segmentId), eq(knowledgeSegments.projectId, projectId)));
  if (!pair || (body.segmentId && pair.documentId !== body.documentId)) throw notFound('问答对不存在');
  if (pair.question === null) throw badRequest('字段 documentId：只有问答对可以添加相似问，这是文本分段');
  const checked = knowledgeSegmentUpdateRequest.safeParse({
    similarQuestions: [...pair.similarQuestions, body.question],
  });
  if (!checked.success)
    throw badRequest(`字段 question：${checked.error.issues[0]?.message ?? '相似问无效'}`);
  await updateSegment(
    db,
    projectId,
    pair.knowledgeBaseId,
    pair.id,
    { similarQuestions: checked.data.similarQuestions },
    embedder,
  );
  return { segmentId: pair.id, knowledgeBaseId: pair.knowledgeBaseId };
}

/** 导出: the figures, the knowledge bases and the gap topics, one table with a section column. */
export function knowledgeReportSheets(
  report: KnowledgeReport,
  gaps: { topics: KnowledgeGapTopic[] },
): ReportSheet[] {
  const pct = (n: number) => `${(n * 100).toFixed(1)}%`;
  const f = report.figures;
  const rows: SheetValue[][] = [
    ['指标', '提问数', f.questions.value, f.questions.previous, ''],
    ['指标', '命中率', pct(f.hitRate.value), pct(f.hitRate.previous), ''],
    ['指标', '未回答率', pct(f.noAnswerRate.value), pct(f.noAnswerRate.previous), ''],
    ...report.byKnowledgeBase.map((r) => [
      '知识库',
      r.label,
      r.values.questions ?? 0,
      r.values.hits ?? 0,
      r.values.noAnswer ?? 0,
    ]),
    ...gaps.topics.map((t) => [
      '知识缺口',
      t.question,
      t.count,
      t.knowledgeBaseName,
      t.suggestedPair ? `${t.suggestedPair.question}（${t.suggestedPair.score.toFixed(2)}）` : '',
    ]),
  ];
  const header = [
    '类别',
    '名称',
    '数值（本期 / 提问数 / 次数）',
    '上期 / 命中数 / 知识库',
    '未回答数 / 建议问答对',
  ];
  return [{ name: '知识库统计', header, rows }];
}
