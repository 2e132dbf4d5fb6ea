import { z } from 'zod';
import { entityId, optionalText, paged, pageQuery, requiredText } from './common';

/**
 * Accepted uploads, by file extension; csv/xlsx are question-answer pairs (问题, 答案 columns, and
 * optionally 相似问题: other phrasings of the question, separated by line breaks, |, ｜, ； or ;).
 */
export const KNOWLEDGE_FILE_TYPES = ['txt', 'md', 'pdf', 'docx', 'csv', 'xlsx'] as const;
export const knowledgeFileType = z.enum(KNOWLEDGE_FILE_TYPES);
export type KnowledgeFileType = z.infer<typeof knowledgeFileType>;
export const KNOWLEDGE_MAX_FILE_BYTES = 20 * 1024 * 1024;
export const KNOWLEDGE_MAX_FILES_PER_UPLOAD = 10;

/** A pair keeps at most this many similar questions (相似问), each at most this many characters. */
export const KNOWLEDGE_MAX_SIMILAR_QUESTIONS = 20;
export const KNOWLEDGE_MAX_SIMILAR_QUESTION_CHARS = 200;

export const knowledgeDocumentStatus = z.enum(['queued', 'parsing', 'ready', 'failed']);
export type KnowledgeDocumentStatus = z.infer<typeof knowledgeDocumentStatus>;
export const KNOWLEDGE_DOCUMENT_STATUS_LABELS: Record<KnowledgeDocumentStatus, string> = {
  queued: '排队中',
  parsing: '解析中',
  ready: '可用',
  failed: '失败',
};

export const chunkSettings = z.object({
  chunkSize: z
    .number({ error: '分段长度须为数字' })
    .int({ error: '分段长度须为整数' })
    .min(100, { error: '分段长度不能小于 100 个字符' })
    .max(2000, { error: '分段长度不能超过 2000 个字符' })
    .default(500),
  chunkOverlap: z
    .number({ error: '分段重叠须为数字' })
    .int({ error: '分段重叠须为整数' })
    .min(0, { error: '分段重叠不能小于 0' })
    .max(500, { error: '分段重叠不能超过 500 个字符' })
    .default(50),
});

export const knowledgeBaseWriteRequest = z
  .object({
    name: requiredText('知识库名称', 50),
    description: optionalText('描述', 200).default(''),
  })
  .extend(chunkSettings.shape)
  .refine((value) => value.chunkOverlap < value.chunkSize, {
    path: ['chunkOverlap'],
    message: '分段重叠须小于分段长度',
  })
  .meta({ id: 'KnowledgeBaseWriteRequest' });
export type KnowledgeBaseWriteRequest = z.input<typeof knowledgeBaseWriteRequest>;

/**
 * Where a base's right and wrong top hits fall, learned from its own questions and 相似问
 * (knowledge-calibration.ts). `cut` is the raw relevance at which confidence is 0.3.
 */
export const knowledgeCalibration = z
  .object({
    cut: z.number(),
    /** Probe questions it was learned from: a pair's 相似问 / question against the rest of the base. */
    positives: z.number().int(),
    negatives: z.number().int(),
    /** On those probes at the cut: right answers kept, and wrong answers let through. */
    recall: z.number(),
    wrongRate: z.number(),
    /** True when the base had too few probes and the cut leans on the product default. */
    usesDefault: z.boolean(),
    computedAt: z.iso.datetime(),
  })
  .meta({ id: 'KnowledgeCalibration' });
export type KnowledgeCalibration = z.infer<typeof knowledgeCalibration>;

export const knowledgeBase = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    chunkSize: z.number().int(),
    chunkOverlap: z.number().int(),
    documentCount: z.number().int(),
    segmentCount: z.number().int(),
    /** Documents still queued or parsing. */
    pendingCount: z.number().int(),
    /** Null until the base has been calibrated (after its first documents are indexed). */
    calibration: knowledgeCalibration.nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'KnowledgeBase' });
export type KnowledgeBase = z.infer<typeof knowledgeBase>;

export const knowledgeBaseListQuery = pageQuery.extend({ keyword: optionalText('关键词', 50).optional() });
export const knowledgeBaseList = paged(knowledgeBase).meta({ id: 'KnowledgeBaseList' });

export const knowledgeBaseIdParams = z.object({
  projectId: entityId('项目 ID'),
  knowledgeBaseId: entityId('知识库 ID'),
});
export const knowledgeDocumentParams = knowledgeBaseIdParams.extend({ documentId: entityId('文档 ID') });
export const knowledgeSegmentParams = knowledgeBaseIdParams.extend({ segmentId: entityId('分段 ID') });

export const knowledgeDocument = z
  .object({
    id: z.string(),
    knowledgeBaseId: z.string(),
    fileName: z.string(),
    fileType: knowledgeFileType,
    sizeBytes: z.number().int(),
    /** text: chunked by paragraph; qa: one segment per question-answer pair, never rewritten. */
    kind: z.enum(['text', 'qa']),
    status: knowledgeDocumentStatus,
    /** 0-100 while parsing. */
    progress: z.number().int(),
    /**
     * Why it failed, in Chinese. For a ready question-answer document, what its import skipped
     * (rows without a question or answer, similar questions too long or too many); empty otherwise.
     */
    error: z.string(),
    segmentCount: z.number().int(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'KnowledgeDocument' });
export type KnowledgeDocument = z.infer<typeof knowledgeDocument>;

export const knowledgeDocumentList = paged(knowledgeDocument).meta({ id: 'KnowledgeDocumentList' });

/** An upload answers per file: accepted ones are queued; a rejected one says why and is not stored. */
export const knowledgeUploadResult = z
  .object({
    accepted: z.array(knowledgeDocument),
    rejected: z.array(z.object({ fileName: z.string(), reason: z.string() })),
  })
  .meta({ id: 'KnowledgeUploadResult' });
export type KnowledgeUploadResult = z.infer<typeof knowledgeUploadResult>;

export const knowledgeSegment = z
  .object({
    id: z.string(),
    knowledgeBaseId: z.string(),
    documentId: z.string(),
    documentName: z.string(),
    position: z.number().int(),
    content: z.string(),
    /** Set for question-answer pairs. */
    question: z.string().nullable(),
    answer: z.string().nullable(),
    /** Other ways a caller may ask a pair's question (相似问); retrieval matches any of them. Empty for text. */
    similarQuestions: z.array(z.string()),
    enabled: z.boolean(),
    charCount: z.number().int(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'KnowledgeSegment' });
export type KnowledgeSegment = z.infer<typeof knowledgeSegment>;

export const knowledgeSegmentListQuery = pageQuery.extend({
  documentId: entityId('文档 ID').optional(),
  keyword: optionalText('关键词', 50).optional(),
});
export const knowledgeSegmentList = paged(knowledgeSegment).meta({ id: 'KnowledgeSegmentList' });

export const knowledgeSegmentUpdateRequest = z
  .object({
    content: requiredText('分段内容', 4000).optional(),
    question: requiredText('问题', 500).optional(),
    answer: requiredText('答案', 4000).optional(),
    /** Replaces the pair's similar questions; duplicates are dropped. */
    similarQuestions: z
      .array(
        z
          .string({ error: '相似问须为文本' })
          .trim()
          .min(1, { error: '相似问不能为空' })
          .max(KNOWLEDGE_MAX_SIMILAR_QUESTION_CHARS, {
            error: `相似问不能超过 ${KNOWLEDGE_MAX_SIMILAR_QUESTION_CHARS} 个字符`,
          }),
        { error: '相似问须为文本列表' },
      )
      .max(KNOWLEDGE_MAX_SIMILAR_QUESTIONS, { error: `相似问最多 ${KNOWLEDGE_MAX_SIMILAR_QUESTIONS} 个` })
      .optional(),
    enabled: z.boolean({ error: '启用状态须为布尔值' }).optional(),
  })
  .meta({ id: 'KnowledgeSegmentUpdateRequest' });

export const knowledgeExportQuery = z.object({
  format: z.enum(['md', 'csv', 'xlsx'], { error: '导出格式须为 md、csv 或 xlsx' }).default('md'),
});

export const hitTestRequest = z
  .object({
    query: requiredText('测试问题', 200),
    topK: z
      .number()
      .int()
      .min(1, { error: '召回条数至少为 1' })
      .max(20, { error: '召回条数不能超过 20' })
      .default(5),
    /** The confidence an answer needs, as an assistant's 相似度阈值 (default 0.3). */
    scoreThreshold: z
      .number({ error: '置信度阈值须为数字' })
      .min(0, { error: '置信度阈值不能低于 0' })
      .max(1, { error: '置信度阈值不能超过 1' })
      .default(0.3),
    /**
     * A model profile of the project: the caller's words are rewritten and the top candidates
     * re-ranked by its chat model, as an assistant with 大模型改写与重排 does.
     */
    llmProviderId: entityId('模型配置 ID').optional(),
  })
  .meta({ id: 'HitTestRequest' });
export type HitTestRequest = z.input<typeof hitTestRequest>;

export const retrievedSegment = z.object({
  id: z.string(),
  knowledgeBaseId: z.string(),
  documentId: z.string(),
  documentName: z.string(),
  content: z.string(),
  question: z.string().nullable(),
  answer: z.string().nullable(),
  /**
   * Calibrated confidence 0-1 that this segment answers the question, comparable with an
   * assistant's threshold: 0.3 is where, on the base's own probe questions, wrong answers become
   * rare (knowledge-calibration.ts); raw relevance is `relevance`.
   */
  score: z.number(),
});
export type RetrievedSegment = z.infer<typeof retrievedSegment>;

/** One of the caller's terms as it counted for a segment: found itself, through a synonym, or not. */
export const matchedTerm = z.object({
  term: z.string(),
  /** Its share of the query's weight (IDF over the base: words common across the base weigh less). */
  weight: z.number(),
  /** The segment's word it matched through the dictionary, when not the caller's own. */
  via: z.string().nullable(),
});
export type MatchedTerm = z.infer<typeof matchedTerm>;

export const hitTestSegment = retrievedSegment.extend({
  /** Raw relevance 0-1 before calibration: the IDF-weighted share of the query found. */
  relevance: z.number(),
  matchedTerms: z.array(matchedTerm),
  /** Position the LLM re-ranker gave it (1 = best), when re-ranking ran. */
  rerankPosition: z.number().int().nullable(),
});
export type HitTestSegment = z.infer<typeof hitTestSegment>;

/**
 * What the assistant would do with the top hit: answer it, or refuse because confidence is low,
 * because the top hits disagree (two different answers almost equally likely), or because nothing
 * in the base matched at all.
 */
export const knowledgeVerdict = z.enum(['answer', 'low_confidence', 'ambiguous', 'no_match']);
export type KnowledgeVerdict = z.infer<typeof knowledgeVerdict>;
export const KNOWLEDGE_VERDICT_LABELS: Record<KnowledgeVerdict, string> = {
  answer: '可回答',
  low_confidence: '置信度不足，拒答',
  ambiguous: '候选答案不一致，拒答',
  no_match: '未找到相关内容，拒答',
};

/** How the caller's words were cleaned before ranking, shown so an operator sees what was searched. */
export const queryAnalysis = z.object({
  original: z.string(),
  /** After call fillers and politeness phrases were removed and numbers read out were written as digits. */
  cleaned: z.string(),
  removedFillers: z.array(z.string()),
  /** Colloquial words replaced by the dictionary's standard term (built-in or the project's own). */
  normalized: z.array(z.object({ from: z.string(), to: z.string() })),
  /** The LLM's rewrite of the question, when a model rewrote it. */
  rewritten: z.string().nullable(),
});
export type QueryAnalysis = z.infer<typeof queryAnalysis>;

export const hitTestResult = z
  .object({
    segments: z.array(hitTestSegment),
    tookMs: z.number(),
    mode: z.enum(['fulltext', 'hybrid']),
    /** Calibrated confidence of the best hit (0 when none). */
    confidence: z.number(),
    threshold: z.number(),
    verdict: knowledgeVerdict,
    /** Whether an assistant with this threshold would answer from the top hit. */
    answered: z.boolean(),
    query: queryAnalysis,
    /** Time the model took to rewrite and to re-rank, when it ran (added to retrieval on a call's turn). */
    rewriteMs: z.number().nullable(),
    rerankMs: z.number().nullable(),
    /** Why the model steps did not run or failed (no chat model, timeout), in Chinese; empty when fine. */
    llmNotice: z.string(),
  })
  .meta({ id: 'HitTestResult' });
export type HitTestResult = z.infer<typeof hitTestResult>;
