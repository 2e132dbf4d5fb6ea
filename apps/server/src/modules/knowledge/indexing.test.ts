import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { knowledgeBases, knowledgeDocuments, knowledgeSegments } from '../../db/schema';
import type { Embedder } from './embedder';
import { multipart } from './fixtures.test-helper';
import { analyzeQuery } from './query';
import { retrieve } from './retrieval';
import { chunkText, indexTerms } from './text';
import { drainKnowledgeQueue, indexNextDocument, MAX_ATTEMPTS, startKnowledgeWorker } from './worker';

describe('chunking', () => {
  it('packs paragraphs up to the chunk size and starts each chunk with the tail of the previous one', () => {
    const paragraphs = Array.from({ length: 10 }, (_, i) => `第${i}段${'内容'.repeat(20)}。`);
    const chunks = chunkText(paragraphs.join('\n\n'), 150, 20);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(150);
    for (let i = 1; i < chunks.length; i++) {
      const tail = chunks[i - 1]!.slice(-20);
      expect(chunks[i]!.startsWith(tail), `chunk ${i} starts with the previous tail`).toBe(true);
    }
    // Nothing is lost: every paragraph is in some chunk whole.
    for (const p of paragraphs) expect(chunks.some((c) => c.includes(p))).toBe(true);
  });

  it('splits an overlong paragraph at Chinese sentence ends, and hard-cuts only a sentence too long to fit', () => {
    const sentences = [
      '第一句话讲安装流程。',
      '第二句话讲资费标准！',
      '第三句话讲售后服务？',
      '第四句话讲退订；',
    ];
    const paragraph = sentences.join('').repeat(4);
    const chunks = chunkText(paragraph, 100, 0);
    expect(chunks.length).toBe(2);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(100);
      expect(chunk).toMatch(/[。！？；]$/);
    }
    const run = chunkText('长'.repeat(250), 100, 10);
    expect(run.every((c) => c.length <= 100)).toBe(true);
    expect(run.join('').replaceAll('\n', '').length).toBeGreaterThanOrEqual(250);
  });

  it('indexes words and their characters, and drops stop words and punctuation from queries', () => {
    expect(indexTerms('宽带安装').split(' ')).toEqual(expect.arrayContaining(['宽带', '安装', '装']));
    const terms = analyzeQuery('请问，你们的宽带怎么安装？').terms.map((t) => t.term);
    expect(terms).toEqual(expect.arrayContaining(['宽带', '安装']));
    for (const stop of ['请问', '你们', '的', '怎么', '，', '？']) expect(terms).not.toContain(stop);
    // A caller's word brings the words a knowledge base is more likely written in.
    const cancel = analyzeQuery('宽带退掉').terms.find((t) => t.spoken.includes('退掉'));
    expect(cancel?.term).toBe('取消');
    expect(cancel?.alternatives).toEqual(expect.arrayContaining(['退掉', '退订']));
  });
});

describe('indexing worker and retrieval', () => {
  let t: Awaited<ReturnType<typeof createTestApp>>;
  let projectId: string;
  let otherProjectId: string;
  let baseId: string;
  let otherBaseId: string;

  async function queueDocument(base: string, project: string, fileName: string, content: string) {
    const id = randomUUID();
    await t.db.insert(knowledgeDocuments).values({
      id,
      projectId: project,
      knowledgeBaseId: base,
      fileName,
      fileType: fileName.endsWith('.csv') ? 'csv' : 'txt',
      kind: fileName.endsWith('.csv') ? 'qa' : 'text',
      sizeBytes: Buffer.byteLength(content),
      content: Buffer.from(content),
    });
    return id;
  }

  const statusOf = async (id: string) =>
    (await t.db.select().from(knowledgeDocuments).where(eq(knowledgeDocuments.id, id)))[0]!;

  beforeAll(async () => {
    t = await createTestApp();
    ({ projectId } = await seedUser(t.db, { email: 'idx@example.com' }));
    ({ projectId: otherProjectId } = await seedUser(t.db, { email: 'idx-other@example.com' }));
    baseId = randomUUID();
    otherBaseId = randomUUID();
    await t.db.insert(knowledgeBases).values([
      { id: baseId, projectId, name: '索引' },
      { id: otherBaseId, projectId: otherProjectId, name: '别人的' },
    ]);
  });

  afterAll(async () => {
    await t.app.close();
  });

  it('resumes a document left parsing by a crashed worker once its lease has expired', async () => {
    const id = await queueDocument(
      baseId,
      projectId,
      'crash.txt',
      '宽带报修请拨打 10000，工程师 24 小时内上门。',
    );
    // A worker claimed it, then the process died: status parsing, lease still running.
    await t.db
      .update(knowledgeDocuments)
      .set({ status: 'parsing', attempts: 1, progress: 40, leaseUntil: sql`now() + interval '1 minute'` })
      .where(eq(knowledgeDocuments.id, id));
    expect(await indexNextDocument(t.db)).toBe(false);
    expect((await statusOf(id)).status).toBe('parsing');

    await t.db
      .update(knowledgeDocuments)
      .set({ leaseUntil: sql`now() - interval '1 second'` })
      .where(eq(knowledgeDocuments.id, id));
    expect(await indexNextDocument(t.db)).toBe(true);
    const doc = await statusOf(id);
    expect(doc).toMatchObject({
      status: 'ready',
      progress: 100,
      attempts: 2,
      segmentCount: 1,
      leaseUntil: null,
    });
  });

  it(`fails a document whose indexing was interrupted ${MAX_ATTEMPTS} times instead of retrying forever`, async () => {
    const id = await queueDocument(baseId, projectId, 'poison.txt', '内容');
    await t.db
      .update(knowledgeDocuments)
      .set({ status: 'parsing', attempts: MAX_ATTEMPTS, leaseUntil: sql`now() - interval '1 second'` })
      .where(eq(knowledgeDocuments.id, id));
    await indexNextDocument(t.db);
    expect(await statusOf(id)).toMatchObject({
      status: 'failed',
      error: '解析多次中断（3 次），请稍后点击“重新解析”',
    });
    const segs = await t.db.select().from(knowledgeSegments).where(eq(knowledgeSegments.documentId, id));
    expect(segs).toEqual([]);
  });

  it("indexes an upload in the background, without anyone draining the queue (the app's own worker)", async () => {
    const headers = await loginAs(t.app, 'idx@example.com');
    const body = multipart([{ name: 'bg.txt', content: '会员积分可以兑换话费和流量包。' }]);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/knowledge-bases/${baseId}/documents`,
      headers: { ...headers, ...body.headers },
      payload: body.payload,
    });
    const id = res.json().data.accepted[0].id as string;
    const deadline = Date.now() + 10_000;
    let status = '';
    while (Date.now() < deadline && status !== 'ready') {
      await new Promise((r) => setTimeout(r, 50));
      const list = await t.app.inject({
        method: 'GET',
        url: `/api/project/${projectId}/knowledge-bases/${baseId}/documents`,
        headers,
      });
      status = list.json().data.items.find((d: { id: string }) => d.id === id)?.status;
    }
    expect(status).toBe('ready');
  });

  it('stops cleanly, handing a document in hand back to the queue', async () => {
    const worker = startKnowledgeWorker(t.db, { idleMs: 60_000 });
    const started = Date.now();
    await worker.stop();
    // An idle worker must not keep a shutdown waiting for its poll interval.
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('retrieves only enabled segments of ready documents in the given bases of that project', async () => {
    await queueDocument(baseId, projectId, 'mine.txt', '国际漫游需要提前开通，资费按目的地计算。');
    await queueDocument(otherBaseId, otherProjectId, 'theirs.txt', '国际漫游需要提前开通，这是别人的资料。');
    await drainKnowledgeQueue(t.db);

    const mine = await retrieve(t.db, {
      projectId,
      knowledgeBaseIds: [baseId, otherBaseId],
      query: '出国漫游怎么开',
      topK: 5,
    });
    expect(mine.mode).toBe('fulltext');
    expect(mine.segments.map((s) => s.documentName)).toEqual(['mine.txt']);

    const queued = await queueDocument(baseId, projectId, 'pending.txt', '国际漫游的排队文档');
    const stillMine = await retrieve(t.db, {
      projectId,
      knowledgeBaseIds: [baseId],
      query: '国际漫游',
      topK: 5,
    });
    expect(stillMine.segments.map((s) => s.documentId)).not.toContain(queued);

    const strict = await retrieve(t.db, {
      projectId,
      knowledgeBaseIds: [baseId],
      query: '国际漫游 资费 目的地 积分 兑换 话费',
      topK: 5,
      scoreThreshold: 0.9,
    });
    expect(strict.segments).toEqual([]);
    await t.db.delete(knowledgeDocuments).where(eq(knowledgeDocuments.id, queued));
  });

  it('fuses embedding similarity in hybrid mode and stores embeddings at indexing time', async () => {
    // A small but real embedder: character bigram counts hashed into 64 dimensions.
    const calls: string[][] = [];
    const embedder: Embedder = async (texts) => {
      calls.push(texts);
      return texts.map((text) => {
        const v = new Array<number>(64).fill(0);
        for (let i = 0; i + 1 < text.length; i++)
          v[(text.charCodeAt(i) * 31 + text.charCodeAt(i + 1)) % 64]! += 1;
        return v;
      });
    };
    const hybridBase = randomUUID();
    await t.db.insert(knowledgeBases).values({ id: hybridBase, projectId, name: '混合检索' });
    await queueDocument(
      hybridBase,
      projectId,
      'h.csv',
      '问题,答案\n流量用超了怎么收费,超出部分按每 GB 3 元收取\n怎么修改服务密码,发送短信 MM 到 10086',
    );
    await drainKnowledgeQueue(t.db, { embedderFor: async () => embedder });
    const stored = await t.db
      .select({ embedding: knowledgeSegments.embedding })
      .from(knowledgeSegments)
      .where(eq(knowledgeSegments.knowledgeBaseId, hybridBase));
    expect(stored.every((s) => s.embedding?.length === 64)).toBe(true);

    const result = await retrieve(t.db, {
      projectId,
      knowledgeBaseIds: [hybridBase],
      query: '流量用超了',
      topK: 2,
      embedder,
    });
    expect(result.mode).toBe('hybrid');
    expect(result.segments[0]?.question).toBe('流量用超了怎么收费');
    expect(result.segments[0]!.score).toBeLessThanOrEqual(1);
    expect(calls.at(-1)).toEqual(['流量用超了']);
  });
});
