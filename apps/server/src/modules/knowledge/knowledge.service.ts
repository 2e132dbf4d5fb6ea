import { randomUUID } from 'node:crypto';
import type {
  HitTestResult,
  KnowledgeBase,
  KnowledgeDocument,
  KnowledgeSegment,
  KnowledgeUploadResult,
  Paged,
} from '@callpilot/contracts';
import { and, asc, count, desc, eq, ilike, inArray, ne, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { knowledgeBases, knowledgeDocuments, knowledgeSegments } from '../../db/schema';
import { AppError, badRequest, conflict, notFound } from '../../lib/errors';
import type { DownloadFile } from '../../lib/reply';
import { CSV_CONTENT_TYPE, csvFile, XLSX_CONTENT_TYPE, xlsxFile } from '../../lib/spreadsheet';
import { assertWithinLimit } from '../projects/limits';
import { answerQuestion, type LlmAssist } from './answer';
import { publicCalibration } from './calibration';
import type { Embedder } from './embedder';
import { checkUpload, kindOf } from './parse';
import { bumpRevision } from './revision';
import { segmentTerms } from './text';

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

type BaseRow = typeof knowledgeBases.$inferSelect;
type DocumentRow = Omit<typeof knowledgeDocuments.$inferSelect, 'content'>;

const documentCount = sql<number>`(select count(*)::int from ${knowledgeDocuments} d where d.knowledge_base_id = knowledge_bases.id)`;
const pendingCount = sql<number>`(select count(*)::int from ${knowledgeDocuments} d where d.knowledge_base_id = knowledge_bases.id and d.status in ('queued', 'parsing'))`;
const segmentCount = sql<number>`(select count(*)::int from ${knowledgeSegments} s where s.knowledge_base_id = knowledge_bases.id)`;

const toBase = (
  row: BaseRow & { documentCount: number; pendingCount: number; segmentCount: number },
): KnowledgeBase => ({
  id: row.id,
  name: row.name,
  description: row.description,
  chunkSize: row.chunkSize,
  chunkOverlap: row.chunkOverlap,
  documentCount: row.documentCount,
  segmentCount: row.segmentCount,
  pendingCount: row.pendingCount,
  calibration: publicCalibration(row.calibration),
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

const baseColumns = {
  id: knowledgeBases.id,
  projectId: knowledgeBases.projectId,
  name: knowledgeBases.name,
  description: knowledgeBases.description,
  chunkSize: knowledgeBases.chunkSize,
  chunkOverlap: knowledgeBases.chunkOverlap,
  revision: knowledgeBases.revision,
  calibration: knowledgeBases.calibration,
  createdAt: knowledgeBases.createdAt,
  updatedAt: knowledgeBases.updatedAt,
  documentCount,
  pendingCount,
  segmentCount,
};

export async function listKnowledgeBases(
  db: Database,
  projectId: string,
  query: { page: number; pageSize: number; keyword?: string },
): Promise<Paged<KnowledgeBase>> {
  const where = and(
    eq(knowledgeBases.projectId, projectId),
    query.keyword ? ilike(knowledgeBases.name, `%${escapeLike(query.keyword)}%`) : undefined,
  );
  const [{ total } = { total: 0 }] = await db.select({ total: count() }).from(knowledgeBases).where(where);
  const rows = await db
    .select(baseColumns)
    .from(knowledgeBases)
    .where(where)
    .orderBy(desc(knowledgeBases.createdAt), asc(knowledgeBases.id))
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize);
  return { items: rows.map(toBase), total, page: query.page, pageSize: query.pageSize };
}

/** A base of this project, or 404: another project's id answers exactly like an unknown one. */
export async function getKnowledgeBase(db: Database, projectId: string, id: string): Promise<KnowledgeBase> {
  const [row] = await db
    .select(baseColumns)
    .from(knowledgeBases)
    .where(and(eq(knowledgeBases.id, id), eq(knowledgeBases.projectId, projectId)));
  if (!row) throw notFound('知识库不存在');
  return toBase(row);
}

type BaseInput = { name: string; description: string; chunkSize: number; chunkOverlap: number };

async function assertNameFree(db: Database, projectId: string, name: string, exceptId?: string) {
  const [clash] = await db
    .select({ id: knowledgeBases.id })
    .from(knowledgeBases)
    .where(
      and(
        eq(knowledgeBases.projectId, projectId),
        eq(knowledgeBases.name, name),
        exceptId ? ne(knowledgeBases.id, exceptId) : undefined,
      ),
    )
    .limit(1);
  if (clash) throw conflict(`知识库名称“${name}”已存在`);
}

export async function createKnowledgeBase(
  db: Database,
  projectId: string,
  input: BaseInput,
): Promise<KnowledgeBase> {
  const [{ n } = { n: 0 }] = await db
    .select({ n: count() })
    .from(knowledgeBases)
    .where(eq(knowledgeBases.projectId, projectId));
  await assertWithinLimit(db, projectId, 'knowledge', n);
  await assertNameFree(db, projectId, input.name);
  const id = randomUUID();
  await db.insert(knowledgeBases).values({ id, projectId, ...input });
  return getKnowledgeBase(db, projectId, id);
}

/** New chunk settings apply to documents indexed from then on (upload or 重新解析). */
export async function updateKnowledgeBase(
  db: Database,
  projectId: string,
  id: string,
  input: BaseInput,
): Promise<KnowledgeBase> {
  await getKnowledgeBase(db, projectId, id);
  await assertNameFree(db, projectId, input.name, id);
  await db
    .update(knowledgeBases)
    .set({ ...input, updatedAt: new Date() })
    .where(and(eq(knowledgeBases.id, id), eq(knowledgeBases.projectId, projectId)));
  return getKnowledgeBase(db, projectId, id);
}

export async function deleteKnowledgeBase(db: Database, projectId: string, id: string): Promise<void> {
  const deleted = await db
    .delete(knowledgeBases)
    .where(and(eq(knowledgeBases.id, id), eq(knowledgeBases.projectId, projectId)))
    .returning({ id: knowledgeBases.id });
  if (deleted.length === 0) throw notFound('知识库不存在');
}

const documentColumns = {
  id: knowledgeDocuments.id,
  projectId: knowledgeDocuments.projectId,
  knowledgeBaseId: knowledgeDocuments.knowledgeBaseId,
  fileName: knowledgeDocuments.fileName,
  fileType: knowledgeDocuments.fileType,
  kind: knowledgeDocuments.kind,
  sizeBytes: knowledgeDocuments.sizeBytes,
  status: knowledgeDocuments.status,
  progress: knowledgeDocuments.progress,
  error: knowledgeDocuments.error,
  segmentCount: knowledgeDocuments.segmentCount,
  attempts: knowledgeDocuments.attempts,
  leaseUntil: knowledgeDocuments.leaseUntil,
  createdAt: knowledgeDocuments.createdAt,
  updatedAt: knowledgeDocuments.updatedAt,
};

const toDocument = (row: DocumentRow): KnowledgeDocument => ({
  id: row.id,
  knowledgeBaseId: row.knowledgeBaseId,
  fileName: row.fileName,
  fileType: row.fileType,
  sizeBytes: row.sizeBytes,
  kind: row.kind,
  status: row.status,
  progress: row.progress,
  error: row.error,
  segmentCount: row.segmentCount,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export interface UploadedFile {
  fileName: string;
  bytes: Buffer;
  /** The multipart reader stopped at the size limit. */
  truncated: boolean;
}

/** Checks every file first; the accepted ones are stored together, queued for the indexer. */
export async function uploadDocuments(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  files: UploadedFile[],
): Promise<KnowledgeUploadResult> {
  await getKnowledgeBase(db, projectId, knowledgeBaseId);
  const rejected: KnowledgeUploadResult['rejected'] = [];
  const rows: (typeof knowledgeDocuments.$inferInsert)[] = [];
  for (const file of files) {
    const fileName = file.fileName.trim().slice(0, 200) || '未命名文件';
    const check = await checkUpload(fileName, file.bytes, file.truncated);
    if (!check.ok) {
      rejected.push({ fileName, reason: check.reason });
      continue;
    }
    rows.push({
      id: randomUUID(),
      projectId,
      knowledgeBaseId,
      fileName,
      fileType: check.fileType,
      kind: kindOf(check.fileType),
      sizeBytes: file.bytes.length,
      content: file.bytes,
      status: 'queued',
    });
  }
  if (rows.length === 0) return { accepted: [], rejected };
  const inserted = await db.insert(knowledgeDocuments).values(rows).returning(documentColumns);
  return { accepted: inserted.map(toDocument), rejected };
}

export async function listDocuments(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  query: { page: number; pageSize: number },
): Promise<Paged<KnowledgeDocument>> {
  await getKnowledgeBase(db, projectId, knowledgeBaseId);
  const where = and(
    eq(knowledgeDocuments.projectId, projectId),
    eq(knowledgeDocuments.knowledgeBaseId, knowledgeBaseId),
  );
  const [{ total } = { total: 0 }] = await db
    .select({ total: count() })
    .from(knowledgeDocuments)
    .where(where);
  const rows = await db
    .select(documentColumns)
    .from(knowledgeDocuments)
    .where(where)
    .orderBy(desc(knowledgeDocuments.createdAt), asc(knowledgeDocuments.id))
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize);
  return { items: rows.map(toDocument), total, page: query.page, pageSize: query.pageSize };
}

const documentWhere = (projectId: string, knowledgeBaseId: string, documentId: string) =>
  and(
    eq(knowledgeDocuments.id, documentId),
    eq(knowledgeDocuments.projectId, projectId),
    eq(knowledgeDocuments.knowledgeBaseId, knowledgeBaseId),
  );

/** One document and its indexing status (the open API polls it after an upload). */
export async function getDocument(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  documentId: string,
): Promise<KnowledgeDocument> {
  const [row] = await db
    .select(documentColumns)
    .from(knowledgeDocuments)
    .where(documentWhere(projectId, knowledgeBaseId, documentId))
    .limit(1);
  if (!row) throw notFound('文档不存在');
  return toDocument(row);
}

/** Its segments go with it (foreign key cascade). */
export async function deleteDocument(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  documentId: string,
) {
  const deleted = await db
    .delete(knowledgeDocuments)
    .where(documentWhere(projectId, knowledgeBaseId, documentId))
    .returning({ id: knowledgeDocuments.id });
  if (deleted.length === 0) throw notFound('文档不存在');
  await bumpRevision(db, knowledgeBaseId);
}

/**
 * Queues the document again (after new chunk settings, or a failure). Its current segments stay
 * until the new ones replace them in one transaction.
 */
export async function reindexDocument(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  documentId: string,
): Promise<KnowledgeDocument> {
  const [row] = await db
    .update(knowledgeDocuments)
    .set({ status: 'queued', progress: 0, error: '', attempts: 0, leaseUntil: null, updatedAt: new Date() })
    .where(documentWhere(projectId, knowledgeBaseId, documentId))
    .returning(documentColumns);
  if (!row) throw notFound('文档不存在');
  return toDocument(row);
}

const segmentColumns = {
  id: knowledgeSegments.id,
  knowledgeBaseId: knowledgeSegments.knowledgeBaseId,
  documentId: knowledgeSegments.documentId,
  documentName: knowledgeDocuments.fileName,
  position: knowledgeSegments.position,
  content: knowledgeSegments.content,
  question: knowledgeSegments.question,
  answer: knowledgeSegments.answer,
  similarQuestions: knowledgeSegments.similarQuestions,
  enabled: knowledgeSegments.enabled,
  updatedAt: knowledgeSegments.updatedAt,
};

const toSegment = (
  row: Omit<KnowledgeSegment, 'charCount' | 'updatedAt'> & { updatedAt: Date },
): KnowledgeSegment => ({
  ...row,
  charCount: row.content.length,
  updatedAt: row.updatedAt.toISOString(),
});

export async function listSegments(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  query: { page: number; pageSize: number; documentId?: string; keyword?: string },
): Promise<Paged<KnowledgeSegment>> {
  await getKnowledgeBase(db, projectId, knowledgeBaseId);
  const where = and(
    eq(knowledgeSegments.projectId, projectId),
    eq(knowledgeSegments.knowledgeBaseId, knowledgeBaseId),
    query.documentId ? eq(knowledgeSegments.documentId, query.documentId) : undefined,
    query.keyword
      ? or(
          ilike(knowledgeSegments.content, `%${escapeLike(query.keyword)}%`),
          // A pair is also found by its similar questions.
          sql`array_to_string(${knowledgeSegments.similarQuestions}, chr(10)) ilike ${`%${escapeLike(query.keyword)}%`}`,
        )
      : undefined,
  );
  const [{ total } = { total: 0 }] = await db.select({ total: count() }).from(knowledgeSegments).where(where);
  const rows = await db
    .select(segmentColumns)
    .from(knowledgeSegments)
    .innerJoin(knowledgeDocuments, eq(knowledgeDocuments.id, knowledgeSegments.documentId))
    .where(where)
    .orderBy(
      asc(knowledgeDocuments.createdAt),
      asc(knowledgeSegments.documentId),
      asc(knowledgeSegments.position),
    )
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize);
  return { items: rows.map(toSegment), total, page: query.page, pageSize: query.pageSize };
}

/**
 * Edits a segment's text (or a pair's question/answer/similar questions) and re-segments its
 * search terms, so retrieval follows the edit at once; a disabled segment is never retrieved. An
 * edited segment's embedding (of its content) is recomputed when an embedder is given, and dropped
 * otherwise rather than left stale.
 */
export async function updateSegment(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  segmentId: string,
  input: {
    content?: string;
    question?: string;
    answer?: string;
    similarQuestions?: string[];
    enabled?: boolean;
  },
  embedder?: Embedder,
): Promise<KnowledgeSegment> {
  const where = and(
    eq(knowledgeSegments.id, segmentId),
    eq(knowledgeSegments.projectId, projectId),
    eq(knowledgeSegments.knowledgeBaseId, knowledgeBaseId),
  );
  const [current] = await db.select().from(knowledgeSegments).where(where);
  if (!current) throw notFound('分段不存在');
  const isPair = current.question !== null;
  if (isPair && input.content !== undefined)
    throw badRequest('字段 content：问答对请修改问题（question）或答案（answer）');
  if (!isPair && (input.question !== undefined || input.answer !== undefined)) {
    throw badRequest('字段 question/answer：文本分段没有问题和答案，请修改分段内容（content）');
  }
  if (!isPair && input.similarQuestions !== undefined)
    throw badRequest('字段 similarQuestions：文本分段没有相似问，只有问答对可以设置相似问');
  const changes: Partial<typeof knowledgeSegments.$inferInsert> = { updatedAt: new Date() };
  if (input.enabled !== undefined) changes.enabled = input.enabled;
  let content: string | undefined;
  if (isPair && (input.question !== undefined || input.answer !== undefined)) {
    changes.question = input.question ?? current.question;
    changes.answer = input.answer ?? current.answer;
    content = `${changes.question}\n${changes.answer}`;
  } else if (input.content !== undefined) {
    content = input.content;
  }
  let similarQuestions = current.similarQuestions;
  if (input.similarQuestions !== undefined) {
    // The contract trimmed and bounded them; repeats, and the question itself, are dropped.
    const question = (changes.question ?? current.question ?? '').trim();
    similarQuestions = [...new Set(input.similarQuestions)].filter((q) => q !== question);
    changes.similarQuestions = similarQuestions;
  }
  if (content !== undefined && content !== current.content) {
    changes.content = content;
    changes.embedding = embedder ? ((await embedder([content]))[0] ?? null) : null;
  }
  if (changes.content !== undefined || changes.similarQuestions !== undefined)
    changes.terms = segmentTerms(changes.content ?? current.content, similarQuestions);
  await db.update(knowledgeSegments).set(changes).where(where);
  await bumpRevision(db, knowledgeBaseId);
  const [row] = await db
    .select(segmentColumns)
    .from(knowledgeSegments)
    .innerJoin(knowledgeDocuments, eq(knowledgeDocuments.id, knowledgeSegments.documentId))
    .where(where);
  return toSegment(row!);
}

/**
 * Adds one question-answer pair to a base (a knowledge gap answered from the reports): stored as a
 * one-pair CSV document, ready at once and searchable at once, as if uploaded and indexed; a
 * reindex of that document yields the same pair.
 */
export async function addPair(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  input: { question: string; answer: string },
  embedder?: Embedder,
): Promise<KnowledgeSegment> {
  await getKnowledgeBase(db, projectId, knowledgeBaseId);
  const question = input.question.trim();
  const answer = input.answer.trim();
  const content = `${question}\n${answer}`;
  const bytes = csvFile(['问题', '答案'], [[question, answer]]);
  const documentId = randomUUID();
  const segmentId = randomUUID();
  const embedding = embedder ? ((await embedder([content]))[0] ?? null) : null;
  await db.transaction(async (tx) => {
    await tx.insert(knowledgeDocuments).values({
      id: documentId,
      projectId,
      knowledgeBaseId,
      fileName: `补充问答-${question.slice(0, 40)}.csv`,
      fileType: 'csv',
      kind: 'qa',
      sizeBytes: bytes.length,
      content: bytes,
      status: 'ready',
      progress: 100,
      segmentCount: 1,
    });
    await tx.insert(knowledgeSegments).values({
      id: segmentId,
      projectId,
      knowledgeBaseId,
      documentId,
      position: 1,
      content,
      question,
      answer,
      similarQuestions: [],
      terms: segmentTerms(content),
      embedding,
    });
    await bumpRevision(tx, knowledgeBaseId);
  });
  const [row] = await db
    .select(segmentColumns)
    .from(knowledgeSegments)
    .innerJoin(knowledgeDocuments, eq(knowledgeDocuments.id, knowledgeSegments.documentId))
    .where(eq(knowledgeSegments.id, segmentId));
  return toSegment(row!);
}

export type ExportFormat = 'md' | 'csv' | 'xlsx';

/**
 * The base back as a file. md holds every segment (text as paragraphs, pairs as 问/相似问/答); csv
 * and xlsx hold the question-answer pairs in the same 问题/答案/相似问题 layout an upload takes.
 * Disabled segments are included: an export is a copy of the base, not of what is switched on.
 */
export async function exportKnowledgeBase(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  format: ExportFormat,
): Promise<DownloadFile> {
  const base = await getKnowledgeBase(db, projectId, knowledgeBaseId);
  const rows = await db
    .select(segmentColumns)
    .from(knowledgeSegments)
    .innerJoin(knowledgeDocuments, eq(knowledgeDocuments.id, knowledgeSegments.documentId))
    .where(
      and(eq(knowledgeSegments.projectId, projectId), eq(knowledgeSegments.knowledgeBaseId, knowledgeBaseId)),
    )
    .orderBy(
      asc(knowledgeDocuments.createdAt),
      asc(knowledgeSegments.documentId),
      asc(knowledgeSegments.position),
    );
  const fileName = `${base.name}.${format}`;
  if (format === 'md') {
    const parts = [`# ${base.name}`];
    let documentId = '';
    for (const row of rows) {
      if (row.documentId !== documentId) {
        documentId = row.documentId;
        parts.push(`## ${row.documentName}`);
      }
      if (row.question === null) {
        parts.push(row.content);
        continue;
      }
      const similar = row.similarQuestions.length
        ? `\n\n**相似问：**\n\n${row.similarQuestions.map((q) => `- ${q}`).join('\n')}`
        : '';
      parts.push(`**问：** ${row.question}${similar}\n\n**答：** ${row.answer}`);
    }
    return {
      fileName,
      contentType: 'text/markdown; charset=utf-8',
      body: Buffer.from(`${parts.join('\n\n')}\n`),
    };
  }
  // Similar questions one a line in their cell, as an upload reads them back.
  const pairs = rows
    .filter((r) => r.question !== null)
    .map((r) => [r.question!, r.answer!, r.similarQuestions.join('\n')]);
  if (format === 'csv') {
    return { fileName, contentType: CSV_CONTENT_TYPE, body: csvFile(['问题', '答案', '相似问题'], pairs) };
  }
  const body = await xlsxFile(
    '问答对',
    [
      { header: '问题', width: 40 },
      { header: '答案', width: 80 },
      { header: '相似问题', width: 40, style: { alignment: { wrapText: true, vertical: 'top' } } },
    ],
    pairs,
  );
  return { fileName, contentType: XLSX_CONTENT_TYPE, body };
}

export async function hitTest(
  db: Database,
  projectId: string,
  knowledgeBaseId: string,
  input: { query: string; topK: number; scoreThreshold: number },
  embedder?: Embedder,
  llm?: LlmAssist,
): Promise<HitTestResult> {
  await getKnowledgeBase(db, projectId, knowledgeBaseId);
  // The hit test is the assistant's own decision, shown: the same call, the same fields.
  return answerQuestion(db, {
    projectId,
    knowledgeBaseIds: [knowledgeBaseId],
    query: input.query,
    topK: input.topK,
    threshold: input.scoreThreshold,
    embedder,
    llm,
  });
}

/** For the assistants module: which of these ids are knowledge bases of the project. */
export async function existingKnowledgeBaseIds(
  db: Database,
  projectId: string,
  ids: string[],
): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select({ id: knowledgeBases.id })
    .from(knowledgeBases)
    .where(and(eq(knowledgeBases.projectId, projectId), inArray(knowledgeBases.id, ids)));
  return rows.map((r) => r.id);
}

export const tooManyFiles = (max: number) =>
  new AppError(400, 'VALIDATION_FAILED', `一次最多上传 ${max} 个文件`);
