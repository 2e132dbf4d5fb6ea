import { and, asc, eq, isNull, lt, or, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/client';
import { knowledgeBases, knowledgeBatchItems, knowledgeBatchTests } from '../../db/schema';
import { type PollLoop, startPollLoop } from '../../lib/poll-loop';
import { answerQuestion, type LlmAssist } from './answer';
import { judge } from './batch-test.service';
import type { Embedder } from './embedder';

/** How long a claim holds; every flush extends it, so only a dead worker lets it run out. */
export const BATCH_LEASE_SECONDS = 30;
/** Judged items are written (and progress moves) at most this often. */
export const BATCH_FLUSH_MS = 200;

export const BASE_GONE = '知识库已删除，测试无法继续';

export interface BatchTestOptions {
  embedderFor?: (db: Database, projectId: string) => Promise<Embedder | undefined>;
  /**
   * The model's help for a run that chose a model profile. The seam for llm-assist.ts
   * (`llmAssistFor`); undefined runs the question without the model.
   */
  assistFor?: (db: Database, projectId: string, llmProviderId: string) => Promise<LlmAssist | undefined>;
  log?: Pick<FastifyBaseLogger, 'error' | 'warn'>;
  signal?: AbortSignal;
  /** The clock flushes are timed on; tests pass one to force a flush per question. */
  now?: () => number;
}

const leaseFromNow = () => sql`now() + make_interval(secs => ${BATCH_LEASE_SECONDS})`;

/** Claims a running test nobody holds (new, or left behind by a worker that died). */
async function claim(db: Database) {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(knowledgeBatchTests)
      .where(
        and(
          eq(knowledgeBatchTests.status, 'running'),
          or(isNull(knowledgeBatchTests.leaseUntil), lt(knowledgeBatchTests.leaseUntil, sql`now()`)),
        ),
      )
      .orderBy(asc(knowledgeBatchTests.createdAt))
      .limit(1)
      .for('update', { skipLocked: true });
    if (!row) return undefined;
    await tx
      .update(knowledgeBatchTests)
      .set({ leaseUntil: leaseFromNow() })
      .where(eq(knowledgeBatchTests.id, row.id));
    return row;
  });
}

type Judged = { position: number } & Partial<typeof knowledgeBatchItems.$inferInsert>;

/**
 * Writes judged items and extends the lease; false when the test is gone (deleted, or its base
 * deleted with it), which ends the run.
 */
async function flush(db: Database, testId: string, judged: Judged[], mode: 'fulltext' | 'hybrid') {
  return db.transaction(async (tx) => {
    const held = await tx
      .update(knowledgeBatchTests)
      .set({ leaseUntil: leaseFromNow(), mode })
      .where(and(eq(knowledgeBatchTests.id, testId), eq(knowledgeBatchTests.status, 'running')))
      .returning({ id: knowledgeBatchTests.id });
    if (held.length === 0) return false;
    for (const { position, ...values } of judged) {
      await tx
        .update(knowledgeBatchItems)
        .set(values)
        .where(and(eq(knowledgeBatchItems.testId, testId), eq(knowledgeBatchItems.position, position)));
    }
    return true;
  });
}

/**
 * Runs the next claimable test to its end; false when there was none. Only items without an
 * outcome are asked, so a run resumed after a crash does not ask its done questions again.
 */
export async function runNextBatchTest(db: Database, options: BatchTestOptions = {}): Promise<boolean> {
  const test = await claim(db);
  if (!test) return false;
  const now = options.now ?? (() => performance.now());
  const finish = (values: Partial<typeof knowledgeBatchTests.$inferInsert>) =>
    db
      .update(knowledgeBatchTests)
      .set({ leaseUntil: null, finishedAt: new Date(), ...values })
      .where(and(eq(knowledgeBatchTests.id, test.id), eq(knowledgeBatchTests.status, 'running')));
  const [base] = await db
    .select({ id: knowledgeBases.id })
    .from(knowledgeBases)
    .where(and(eq(knowledgeBases.id, test.knowledgeBaseId), eq(knowledgeBases.projectId, test.projectId)));
  if (!base) {
    await finish({ status: 'failed', error: BASE_GONE });
    return true;
  }
  const pending = await db
    .select({
      position: knowledgeBatchItems.position,
      question: knowledgeBatchItems.question,
      expected: knowledgeBatchItems.expected,
    })
    .from(knowledgeBatchItems)
    .where(and(eq(knowledgeBatchItems.testId, test.id), isNull(knowledgeBatchItems.outcome)))
    .orderBy(asc(knowledgeBatchItems.position));

  let buffer: Judged[] = [];
  let lastFlush = now();
  let mode = test.mode;
  try {
    const embedder = await options.embedderFor?.(db, test.projectId);
    const llm = test.llmProviderId
      ? await options.assistFor?.(db, test.projectId, test.llmProviderId)
      : undefined;
    for (const item of pending) {
      if (options.signal?.aborted) {
        // What was judged is kept and the lease let go: another process takes up the rest at once.
        await flush(db, test.id, buffer, mode);
        await db
          .update(knowledgeBatchTests)
          .set({ leaseUntil: null })
          .where(eq(knowledgeBatchTests.id, test.id));
        return true;
      }
      const answer = await answerQuestion(db, {
        projectId: test.projectId,
        knowledgeBaseIds: [test.knowledgeBaseId],
        query: item.question,
        topK: test.topK,
        threshold: test.threshold,
        embedder,
        llm,
        onEmbedderError: (err) => options.log?.warn({ err }, 'batch test: embeddings failed, full text only'),
      });
      mode = answer.mode;
      buffer.push({
        position: item.position,
        ...judge(item.expected, answer),
        verdict: answer.verdict,
        confidence: answer.confidence,
      });
      const at = now();
      if (at - lastFlush >= BATCH_FLUSH_MS) {
        if (!(await flush(db, test.id, buffer, mode))) return true;
        buffer = [];
        lastFlush = at;
      }
    }
    if (!(await flush(db, test.id, buffer, mode))) return true;
  } catch (err) {
    if (options.signal?.aborted) throw err;
    // What broke this run (a question, the project's model settings) would break every resume: it stops here.
    options.log?.error({ err, testId: test.id }, 'batch test failed');
    await finish({ status: 'failed', error: '测试运行出错，请稍后重新上传测试' });
    return true;
  }
  await finish({ status: 'done' });
  return true;
}

export type BatchTestWorker = PollLoop;

/** The background runner of batch tests of this process, like the indexing worker beside it. */
export function startBatchTestWorker(
  db: Database,
  options: Omit<BatchTestOptions, 'signal'> & { idleMs?: number } = {},
): BatchTestWorker {
  return startPollLoop((signal) => runNextBatchTest(db, { ...options, signal }), {
    idleMs: options.idleMs ?? 1000,
    onError: (err) => options.log?.warn({ err }, 'batch test worker failed'),
  });
}
