import { z } from 'zod';
import { entityId, paged, pageQuery, requiredText } from './common';
import { knowledgeVerdict } from './knowledge';

// ---------------------------------------------------------------------------------------------
// 口语词典: a project's own colloquial → standard terms, on top of the built-in dictionary.
// ---------------------------------------------------------------------------------------------

export const KNOWLEDGE_TERM_MAX_VARIANTS = 20;

const termWord = (label: string) =>
  requiredText(label, 20).refine((w) => !/\s/.test(w), { error: `${label}不能包含空格` });

export const knowledgeTermWriteRequest = z
  .object({
    /** The word the knowledge base is written in (光猫). */
    standard: termWord('标准词'),
    /** What callers say instead (猫, 猫子, 调制解调器). */
    variants: z
      .array(termWord('口语说法'), { error: '口语说法须为文本列表' })
      .min(1, { error: '请至少填写 1 个口语说法' })
      .max(KNOWLEDGE_TERM_MAX_VARIANTS, { error: `口语说法最多 ${KNOWLEDGE_TERM_MAX_VARIANTS} 个` }),
  })
  .refine((v) => !v.variants.includes(v.standard), {
    path: ['variants'],
    message: '口语说法不能与标准词相同',
  })
  .meta({ id: 'KnowledgeTermWriteRequest' });
export type KnowledgeTermWriteRequest = z.input<typeof knowledgeTermWriteRequest>;

export const knowledgeTerm = z
  .object({
    id: z.string(),
    standard: z.string(),
    variants: z.array(z.string()),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'KnowledgeTerm' });
export type KnowledgeTerm = z.infer<typeof knowledgeTerm>;

export const knowledgeTermListQuery = pageQuery.extend({
  keyword: z.string().trim().max(20, { error: '关键词不能超过 20 个字符' }).optional(),
});
export const knowledgeTermList = paged(knowledgeTerm).meta({ id: 'KnowledgeTermList' });
export const knowledgeTermParams = z.object({ projectId: entityId('项目 ID'), termId: entityId('词条 ID') });

/** A built-in entry, listed read-only beside the project's own. */
export const builtinKnowledgeTerm = z.object({ standard: z.string(), variants: z.array(z.string()) });

/** A project's own entries at most: each is applied to every question, so the list stays curated. */
export const KNOWLEDGE_TERMS_MAX = 500;

/** The columns of an import or export file; variants in one cell, separated by | ｜ 、 , ， or line breaks. */
export const KNOWLEDGE_TERM_FILE_HEADERS = ['标准词', '口语说法'] as const;

export const knowledgeTermExportQuery = z.object({
  format: z.enum(['csv', 'xlsx'], { error: '导出格式须为 csv 或 xlsx' }).default('csv'),
});

/** A row of an import left out, as it was in the file, with the reason. */
export const knowledgeTermImportRejectedRow = z.object({
  /** The row number in the file (the header is row 1). */
  row: z.number().int(),
  standard: z.string(),
  variants: z.string(),
  reason: z.string(),
});
export type KnowledgeTermImportRejectedRow = z.infer<typeof knowledgeTermImportRejectedRow>;

/**
 * What an import did: new entries, existing entries that gained variants (never replaced), rows
 * that added nothing new, and rows left out with their reason.
 */
export const knowledgeTermImportResult = z
  .object({
    created: z.number().int(),
    merged: z.number().int(),
    unchanged: z.number().int(),
    rejected: z.array(knowledgeTermImportRejectedRow),
  })
  .meta({ id: 'KnowledgeTermImportResult' });
export type KnowledgeTermImportResult = z.infer<typeof knowledgeTermImportResult>;

// ---------------------------------------------------------------------------------------------
// 批量测试: a list of questions with their expected answers, run against a base.
// ---------------------------------------------------------------------------------------------

export const KNOWLEDGE_BATCH_MAX_QUESTIONS = 2000;

export const knowledgeBatchTestStatus = z.enum(['running', 'done', 'failed']);
export type KnowledgeBatchTestStatus = z.infer<typeof knowledgeBatchTestStatus>;
export const KNOWLEDGE_BATCH_TEST_STATUS_LABELS: Record<KnowledgeBatchTestStatus, string> = {
  running: '测试中',
  done: '已完成',
  failed: '失败',
};

/**
 * How one question came out: an answerable question answered right (correct), answered with the
 * wrong segment (wrong), or refused (refused); a question that should not be answered refused
 * (refused_correctly) or answered anyway (answered_unanswerable).
 */
export const knowledgeBatchOutcome = z.enum([
  'correct',
  'wrong',
  'refused',
  'refused_correctly',
  'answered_unanswerable',
]);
export type KnowledgeBatchOutcome = z.infer<typeof knowledgeBatchOutcome>;
export const KNOWLEDGE_BATCH_OUTCOME_LABELS: Record<KnowledgeBatchOutcome, string> = {
  correct: '回答正确',
  wrong: '答错',
  refused: '应答未答',
  refused_correctly: '正确拒答',
  answered_unanswerable: '不应答却答了',
};

export const knowledgeBatchMetrics = z.object({
  total: z.number().int(),
  answerable: z.number().int(),
  unanswerable: z.number().int(),
  /** Over answerable questions: the expected answer ranked first / within the first three. */
  recallAt1: z.number(),
  recallAt3: z.number(),
  correct: z.number().int(),
  wrong: z.number().int(),
  refused: z.number().int(),
  refusedCorrectly: z.number().int(),
  answeredUnanswerable: z.number().int(),
  /** wrong / answerable, and answeredUnanswerable / unanswerable (0 when none). */
  wrongRate: z.number(),
  unanswerableAnsweredRate: z.number(),
});
export type KnowledgeBatchMetrics = z.infer<typeof knowledgeBatchMetrics>;

export const knowledgeBatchTest = z
  .object({
    id: z.string(),
    knowledgeBaseId: z.string(),
    fileName: z.string(),
    status: knowledgeBatchTestStatus,
    /** 0-100 while running. */
    progress: z.number().int(),
    error: z.string(),
    /** Rows of the upload left out (no question), with the reason; their CSV is downloadable. */
    skipped: z.number().int(),
    threshold: z.number(),
    mode: z.enum(['fulltext', 'hybrid']),
    /** Whether the project's model rewrote and re-ranked (a model profile was chosen). */
    llmProviderId: z.string().nullable(),
    metrics: knowledgeBatchMetrics,
    createdAt: z.iso.datetime(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'KnowledgeBatchTest' });
export type KnowledgeBatchTest = z.infer<typeof knowledgeBatchTest>;

export const knowledgeBatchTestList = paged(knowledgeBatchTest).meta({ id: 'KnowledgeBatchTestList' });
export const knowledgeBatchTestParams = z.object({
  projectId: entityId('项目 ID'),
  knowledgeBaseId: entityId('知识库 ID'),
  testId: entityId('测试 ID'),
});

export const knowledgeBatchItem = z
  .object({
    position: z.number().int(),
    question: z.string(),
    /** Empty when the question should not be answered. */
    expected: z.string().nullable(),
    outcome: knowledgeBatchOutcome,
    verdict: knowledgeVerdict,
    confidence: z.number(),
    /** 1-based rank of the expected answer among the top hits, null when not among them. */
    expectedRank: z.number().int().nullable(),
    /** The top hit: what the assistant would have said (its question for a pair). */
    topSegmentId: z.string().nullable(),
    topText: z.string().nullable(),
  })
  .meta({ id: 'KnowledgeBatchItem' });
export type KnowledgeBatchItem = z.infer<typeof knowledgeBatchItem>;

export const knowledgeBatchItemListQuery = pageQuery.extend({
  outcome: knowledgeBatchOutcome.optional(),
});
export const knowledgeBatchItemList = paged(knowledgeBatchItem).meta({ id: 'KnowledgeBatchItemList' });

/** Two runs of the same questions: the metric deltas and the questions whose outcome changed. */
export const knowledgeBatchCompareQuery = z.object({ with: entityId('对比的测试 ID') });
export const knowledgeBatchComparison = z
  .object({
    current: knowledgeBatchTest,
    previous: knowledgeBatchTest,
    /** Questions (matched by text) in both runs. */
    common: z.number().int(),
    improved: z.array(
      z.object({ question: z.string(), before: knowledgeBatchOutcome, after: knowledgeBatchOutcome }),
    ),
    regressed: z.array(
      z.object({ question: z.string(), before: knowledgeBatchOutcome, after: knowledgeBatchOutcome }),
    ),
  })
  .meta({ id: 'KnowledgeBatchComparison' });
export type KnowledgeBatchComparison = z.infer<typeof knowledgeBatchComparison>;
