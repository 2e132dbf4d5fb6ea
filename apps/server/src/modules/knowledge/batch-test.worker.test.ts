import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, seedUser } from '../../../test/helpers';
import type { DatabaseHandle } from '../../db/client';
import { knowledgeBatchItems, knowledgeBatchTests, llmProviders } from '../../db/schema';
import { createBatchTest, getBatchTest, parseBatchFile } from './batch-test.service';
import { runNextBatchTest } from './batch-test.worker';
import { createKnowledgeBase, uploadDocuments } from './knowledge.service';
import { drainKnowledgeQueue } from './worker';

// The worker alone on a database no app runs on, so no other worker claims the test under it.
let handle: DatabaseHandle;
let projectId: string;
let baseId: string;

const FAQ = [
  '问题,答案',
  '宽带安装需要多长时间？,受理后一般在 3 个工作日内上门安装。',
  '光猫坏了怎么办？,光猫故障可免费上门更换，请先报修。',
  '营业厅几点开门？,营业厅每天上午 9 点到晚上 6 点营业。',
].join('\n');

const QUESTIONS = [
  '问题,期望答案',
  '宽带安装需要多长时间？,3 个工作日内上门安装',
  '光猫坏了怎么办？,免费上门更换',
  '营业厅几点开门？,上午 9 点到晚上 6 点',
  '火星上今天的天气如何,',
].join('\n');

async function newTest(llmProviderId?: string) {
  const sheet = await parseBatchFile('q.csv', Buffer.from(QUESTIONS));
  return createBatchTest(handle.db, projectId, baseId, {
    fileName: 'q.csv',
    sheet,
    threshold: 0.3,
    topK: 3,
    llmProviderId,
  });
}

const itemsOf = (testId: string) =>
  handle.db
    .select()
    .from(knowledgeBatchItems)
    .where(eq(knowledgeBatchItems.testId, testId))
    .orderBy(asc(knowledgeBatchItems.position));

beforeAll(async () => {
  handle = await createTestDatabase();
  ({ projectId } = await seedUser(handle.db, { email: 'bt-worker@example.com' }));
  baseId = (
    await createKnowledgeBase(handle.db, projectId, {
      name: '宽带',
      description: '',
      chunkSize: 500,
      chunkOverlap: 50,
    })
  ).id;
  await uploadDocuments(handle.db, projectId, baseId, [
    { fileName: 'faq.csv', bytes: Buffer.from(FAQ), truncated: false },
  ]);
  await drainKnowledgeQueue(handle.db);
});

afterAll(async () => {
  await handle.close();
});

describe('batch test worker', () => {
  it('writes judged questions as it goes, and a stopped run is finished later without asking them again', async () => {
    const test = await newTest();
    const stop = new AbortController();
    // The clock jumps a second at each look (one at the start, one per question), so every
    // question is flushed; the process is stopped once two have been.
    let looks = 0;
    const ran = await runNextBatchTest(handle.db, {
      signal: stop.signal,
      now: () => {
        looks += 1;
        if (looks === 3) stop.abort();
        return looks * 1000;
      },
    });
    expect(ran).toBe(true);
    const halfway = await itemsOf(test.id);
    expect(halfway.map((i) => i.outcome)).toEqual(['correct', 'correct', null, null]);
    const [row] = await handle.db
      .select()
      .from(knowledgeBatchTests)
      .where(eq(knowledgeBatchTests.id, test.id));
    // Still running and free to claim at once: the stop hands it back rather than waiting out the lease.
    expect(row).toMatchObject({ status: 'running', leaseUntil: null, finishedAt: null });
    expect((await getBatchTest(handle.db, projectId, baseId, test.id)).progress).toBe(50);

    // A marker on the done questions that a second asking would overwrite.
    await handle.db
      .update(knowledgeBatchItems)
      .set({ topText: '第一次运行' })
      .where(and(eq(knowledgeBatchItems.testId, test.id), eq(knowledgeBatchItems.position, 1)));
    expect(await runNextBatchTest(handle.db)).toBe(true);
    const done = await itemsOf(test.id);
    expect(done.map((i) => i.outcome)).toEqual(['correct', 'correct', 'correct', 'refused_correctly']);
    expect(done[0]!.topText).toBe('第一次运行');
    const finished = await getBatchTest(handle.db, projectId, baseId, test.id);
    expect(finished).toMatchObject({
      status: 'done',
      progress: 100,
      metrics: { correct: 3, refusedCorrectly: 1 },
    });
    expect(await runNextBatchTest(handle.db)).toBe(false);
  });

  it('leaves a test another worker holds alone until its lease runs out', async () => {
    const test = await newTest();
    await handle.db
      .update(knowledgeBatchTests)
      .set({ leaseUntil: new Date(Date.now() + 60_000) })
      .where(eq(knowledgeBatchTests.id, test.id));
    expect(await runNextBatchTest(handle.db)).toBe(false);
    expect((await itemsOf(test.id)).every((i) => i.outcome === null)).toBe(true);
    await handle.db
      .update(knowledgeBatchTests)
      .set({ leaseUntil: new Date(Date.now() - 1000) })
      .where(eq(knowledgeBatchTests.id, test.id));
    expect(await runNextBatchTest(handle.db)).toBe(true);
    expect((await getBatchTest(handle.db, projectId, baseId, test.id)).status).toBe('done');
  });

  it('stops a run whose test was deleted under it', async () => {
    const test = await newTest();
    const ran = await runNextBatchTest(handle.db, {
      // Deleted once the run has started; its first flush finds it gone and writes nothing.
      embedderFor: async (db) => {
        await db.delete(knowledgeBatchTests).where(eq(knowledgeBatchTests.id, test.id));
        return undefined;
      },
      now: (() => {
        let looks = 0;
        return () => ++looks * 1000;
      })(),
    });
    expect(ran).toBe(true);
    expect(await itemsOf(test.id)).toEqual([]);
    expect(await runNextBatchTest(handle.db)).toBe(false);
  });

  it('fails a run with the reason in Chinese when it cannot go on, and keeps what was judged', async () => {
    await handle.db
      .insert(llmProviders)
      .values({ id: 'llm-1', projectId, name: '通义', baseUrl: 'http://127.0.0.1:9/v1', model: 'qwen-plus' });
    const test = await newTest('llm-1');
    const asked: string[] = [];
    const ran = await runNextBatchTest(handle.db, {
      assistFor: async (_db, _project, providerId) => {
        asked.push(providerId);
        throw new Error("the profile's key cannot be read");
      },
    });
    expect(ran).toBe(true);
    expect(asked).toEqual(['llm-1']);
    const failed = await getBatchTest(handle.db, projectId, baseId, test.id);
    expect(failed).toMatchObject({
      status: 'failed',
      error: '测试运行出错，请稍后重新上传测试',
      progress: 0,
    });
    expect(failed.finishedAt).not.toBeNull();
    expect(await runNextBatchTest(handle.db)).toBe(false);
  });
});
