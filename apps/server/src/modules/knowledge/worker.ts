import { randomUUID } from 'node:crypto';
import { and, asc, eq, inArray, isNull, lt, ne, or, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/client';
import { knowledgeBases, knowledgeDocuments, knowledgeSegments } from '../../db/schema';
import { type PollLoop, startPollLoop } from '../../lib/poll-loop';
import { recalibrateLater } from './calibrate';
import type { Embedder } from './embedder';
import { ParseError, parseDocument } from './parse';
import { bumpRevision } from './revision';
import { segmentTerms } from './text';

/** How long a claim holds; progress updates extend it, so only a dead worker lets it run out. */
export const LEASE_SECONDS = 60;
/** A document whose indexing was interrupted this often (it may be what kills the process) fails. */
export const MAX_ATTEMPTS = 3;
const INSERT_BATCH = 500;
const EMBED_BATCH = 64;

export interface IndexingOptions {
  /** Which embedder indexes a project's segments; by default the project's configured one, if any. */
  embedderFor?: (db: Database, projectId: string) => Promise<Embedder | undefined>;
  log?: Pick<FastifyBaseLogger, 'error' | 'warn'>;
  /** Set when the worker is stopping: the document in hand goes back to the queue untouched. */
  signal?: AbortSignal;
}

class Released extends Error {}

const leaseFromNow = () => sql`now() + make_interval(secs => ${LEASE_SECONDS})`;

/**
 * Claims the oldest claimable document: queued (and not waiting out a retry delay), or parsing
 * with an expired lease, i.e. left behind by a worker that died. SKIP LOCKED lets several
 * server processes claim side by side without taking the same document.
 */
async function claim(db: Database): Promise<{ id: string; attempts: number } | 'skipped' | undefined> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select({ id: knowledgeDocuments.id, attempts: knowledgeDocuments.attempts })
      .from(knowledgeDocuments)
      .where(
        or(
          and(
            eq(knowledgeDocuments.status, 'queued'),
            or(isNull(knowledgeDocuments.leaseUntil), lt(knowledgeDocuments.leaseUntil, sql`now()`)),
          ),
          and(eq(knowledgeDocuments.status, 'parsing'), lt(knowledgeDocuments.leaseUntil, sql`now()`)),
        ),
      )
      .orderBy(asc(knowledgeDocuments.createdAt))
      .limit(1)
      .for('update', { skipLocked: true });
    if (!row) return undefined;
    if (row.attempts >= MAX_ATTEMPTS) {
      await tx
        .update(knowledgeDocuments)
        .set({
          status: 'failed',
          error: `解析多次中断（${MAX_ATTEMPTS} 次），请稍后点击“重新解析”`,
          leaseUntil: null,
          updatedAt: new Date(),
        })
        .where(eq(knowledgeDocuments.id, row.id));
      return 'skipped';
    }
    const attempts = row.attempts + 1;
    await tx
      .update(knowledgeDocuments)
      .set({
        status: 'parsing',
        attempts,
        progress: 0,
        error: '',
        leaseUntil: leaseFromNow(),
        updatedAt: new Date(),
      })
      .where(eq(knowledgeDocuments.id, row.id));
    return { id: row.id, attempts };
  });
}

/** Only the holder of the current claim may write: a reindex or a newer claim makes it stale. */
const ours = (job: { id: string; attempts: number }) =>
  and(
    eq(knowledgeDocuments.id, job.id),
    eq(knowledgeDocuments.status, 'parsing'),
    eq(knowledgeDocuments.attempts, job.attempts),
  );

async function index(db: Database, job: { id: string; attempts: number }, options: IndexingOptions) {
  const [doc] = await db
    .select({
      projectId: knowledgeDocuments.projectId,
      knowledgeBaseId: knowledgeDocuments.knowledgeBaseId,
      fileType: knowledgeDocuments.fileType,
      content: knowledgeDocuments.content,
      chunkSize: knowledgeBases.chunkSize,
      chunkOverlap: knowledgeBases.chunkOverlap,
    })
    .from(knowledgeDocuments)
    .innerJoin(knowledgeBases, eq(knowledgeBases.id, knowledgeDocuments.knowledgeBaseId))
    .where(eq(knowledgeDocuments.id, job.id));
  if (!doc) return;

  let lastReport = 0;
  const report = async (progress: number, force = false) => {
    if (options.signal?.aborted) throw new Released();
    if (!force && Date.now() - lastReport < 200) return;
    lastReport = Date.now();
    await db
      .update(knowledgeDocuments)
      .set({ progress: Math.round(progress), leaseUntil: leaseFromNow(), updatedAt: new Date() })
      .where(ours(job));
  };

  await report(5, true);
  const parsed = await parseDocument(doc.fileType, doc.content, doc, (fraction) => report(5 + fraction * 55));
  await report(60, true);
  const rows = parsed.segments.map((segment, index) => ({
    id: randomUUID(),
    projectId: doc.projectId,
    knowledgeBaseId: doc.knowledgeBaseId,
    documentId: job.id,
    // 1-based: the console shows it as the segment's number (#1 is the first).
    position: index + 1,
    content: segment.content,
    question: segment.question,
    answer: segment.answer,
    similarQuestions: segment.similarQuestions,
    terms: segmentTerms(
      segment.context ? `${segment.context}\n${segment.content}` : segment.content,
      segment.similarQuestions,
    ),
    embedding: null as number[] | null,
  }));
  await report(70, true);

  const embedder = options.embedderFor ? await options.embedderFor(db, doc.projectId) : undefined;
  if (embedder) {
    for (let i = 0; i < rows.length; i += EMBED_BATCH) {
      const batch = rows.slice(i, i + EMBED_BATCH);
      const vectors = await embedder(batch.map((r) => r.content));
      batch.forEach((row, j) => {
        row.embedding = vectors[j] ?? null;
      });
      await report(70 + ((i + batch.length) / rows.length) * 20);
    }
  }
  if (options.signal?.aborted) throw new Released();

  // All of a document's segments appear at once, together with its ready status, or none do.
  await db.transaction(async (tx) => {
    const [still] = await tx
      .select({ id: knowledgeDocuments.id })
      .from(knowledgeDocuments)
      .where(ours(job))
      .for('update');
    if (!still) return;
    await tx.delete(knowledgeSegments).where(eq(knowledgeSegments.documentId, job.id));
    for (let i = 0; i < rows.length; i += INSERT_BATCH) {
      await tx.insert(knowledgeSegments).values(rows.slice(i, i + INSERT_BATCH));
    }
    await tx
      .update(knowledgeDocuments)
      .set({
        status: 'ready',
        progress: 100,
        // What the import skipped, if anything: shown with the ready document as a warning.
        error: parsed.notice,
        segmentCount: rows.length,
        leaseUntil: null,
        updatedAt: new Date(),
      })
      .where(eq(knowledgeDocuments.id, job.id));
    await bumpRevision(tx, doc.knowledgeBaseId);
  });
  // Calibrated as soon as the base's last pending document is in, so its first questions are
  // judged by its own cut: answerQuestion waits for this run rather than starting another.
  const [pending] = await db
    .select({ id: knowledgeDocuments.id })
    .from(knowledgeDocuments)
    .where(
      and(
        eq(knowledgeDocuments.knowledgeBaseId, doc.knowledgeBaseId),
        inArray(knowledgeDocuments.status, ['queued', 'parsing']),
        ne(knowledgeDocuments.id, job.id),
      ),
    )
    .limit(1);
  if (!pending)
    await recalibrateLater(db, doc.projectId, doc.knowledgeBaseId, {
      embedder,
      onError: (err) => options.log?.warn({ err }, 'knowledge calibration failed'),
    });
}

/**
 * Claims and indexes one document. Answers false when nothing was claimable. A ParseError fails
 * the document with its reason (retrying cannot fix a broken file); anything else (database,
 * embeddings endpoint) is retried after a delay, up to MAX_ATTEMPTS.
 */
export async function indexNextDocument(db: Database, options: IndexingOptions = {}): Promise<boolean> {
  const job = await claim(db);
  if (job === undefined) return false;
  if (job === 'skipped') return true;
  try {
    await index(db, job, options);
  } catch (err) {
    if (err instanceof Released) {
      // Shutting down: hand the document back without counting the attempt.
      await db
        .update(knowledgeDocuments)
        .set({
          status: 'queued',
          attempts: job.attempts - 1,
          progress: 0,
          leaseUntil: null,
          updatedAt: new Date(),
        })
        .where(ours(job));
      return true;
    }
    const parseFailure = err instanceof ParseError;
    if (!parseFailure) options.log?.error({ err, documentId: job.id }, 'knowledge document indexing failed');
    const giveUp = parseFailure || job.attempts >= MAX_ATTEMPTS;
    await db
      .update(knowledgeDocuments)
      .set(
        giveUp
          ? {
              status: 'failed',
              progress: 0,
              error: parseFailure ? err.message : '索引失败，请稍后点击“重新解析”',
              leaseUntil: null,
              updatedAt: new Date(),
            }
          : {
              status: 'queued',
              progress: 0,
              leaseUntil: sql`now() + make_interval(secs => ${5 * job.attempts})`,
              updatedAt: new Date(),
            },
      )
      .where(ours(job));
  }
  return true;
}

/**
 * Indexes everything claimable, then waits until documents held by other workers (this
 * process's background worker, say) are done too. For tests and the demo seed.
 */
export async function drainKnowledgeQueue(
  db: Database,
  options: IndexingOptions & { timeoutMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  while (Date.now() < deadline) {
    while (await indexNextDocument(db, options)) {}
    const [pending] = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(knowledgeDocuments)
      .where(inArray(knowledgeDocuments.status, ['queued', 'parsing']));
    if (!pending || pending.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('knowledge queue did not drain in time');
}

export type KnowledgeWorker = PollLoop;

/**
 * The background indexer of this process. It polls once per `idleMs` when idle (documents queued
 * by another process, or left behind by a crash once their lease runs out) and is woken at once
 * by uploads made through this process.
 */
export function startKnowledgeWorker(
  db: Database,
  options: Omit<IndexingOptions, 'signal'> & { idleMs?: number } = {},
): KnowledgeWorker {
  return startPollLoop((signal) => indexNextDocument(db, { ...options, signal }), {
    idleMs: options.idleMs ?? 1000,
    onError: (err) => options.log?.warn({ err }, 'knowledge worker could not claim work'),
  });
}
