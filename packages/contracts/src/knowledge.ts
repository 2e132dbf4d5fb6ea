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
  })
  .meta({ id: 'HitTestRequest' });

export const retrievedSegment = z.object({
  id: z.string(),
  knowledgeBaseId: z.string(),
  documentId: z.string(),
  documentName: z.string(),
  content: z.string(),
  question: z.string().nullable(),
  answer: z.string().nullable(),
  /** 0-1, higher is better; comparable with an assistant's score threshold. */
  score: z.number(),
});
export type RetrievedSegment = z.infer<typeof retrievedSegment>;

export const hitTestResult = z
  .object({ segments: z.array(retrievedSegment), tookMs: z.number(), mode: z.enum(['fulltext', 'hybrid']) })
  .meta({ id: 'HitTestResult' });
export type HitTestResult = z.infer<typeof hitTestResult>;
