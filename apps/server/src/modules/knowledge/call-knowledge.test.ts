import { type AssistantConfig, assistantConfig } from '@callpilot/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedUser } from '../../../test/helpers';
import type { LlmAssist } from './answer';
import { knowledgeSource, llmAssistOf } from './call-knowledge';
import { createKnowledgeBase, uploadDocuments } from './knowledge.service';
import { drainKnowledgeQueue } from './worker';

let t: Awaited<ReturnType<typeof createTestApp>>;
let projectId: string;
let baseId: string;

const FAQ_CSV = [
  '问题,答案',
  '宽带安装需要多长时间？,受理后一般在 3 个工作日内上门安装。',
  '光猫坏了怎么办？,光猫属于租用设备，故障可免费上门更换，请先报修。',
  '宽带资费有哪些套餐？,宽带有 100M、300M、1000M 三档套餐，详询营业厅。',
].join('\n');

beforeAll(async () => {
  t = await createTestApp();
  ({ projectId } = await seedUser(t.db, { email: 'call-knowledge@example.com' }));
  baseId = (
    await createKnowledgeBase(t.db, projectId, {
      name: '宽带 FAQ',
      description: '',
      chunkSize: 500,
      chunkOverlap: 50,
    })
  ).id;
  await uploadDocuments(t.db, projectId, baseId, [
    { fileName: 'faq.csv', bytes: Buffer.from(FAQ_CSV), truncated: false },
  ]);
  await drainKnowledgeQueue(t.db);
}, 60_000);

afterAll(async () => {
  await t?.app.close();
});

const config = (knowledge: Record<string, unknown> = {}, providerId: string | null = null): AssistantConfig =>
  assistantConfig.parse({
    brain: { providerId, model: '' },
    knowledge: { baseIds: [baseId], topK: 3, scoreThreshold: 0.3, ...knowledge },
  });

const noopAssist: LlmAssist = {
  rewrite: async (query) => query,
  rerank: async (_query, candidates) => candidates.map((c) => c.id),
};

describe('the engine’s knowledge source', () => {
  it('answers a base’s own question with usable segments and no nearest candidate', async () => {
    const own = knowledgeSource(t.db, { embedderFor: async () => undefined });
    const lookup = await own.retrieve(projectId, config(), '宽带安装需要多长时间？');
    expect(lookup.verdict).toBe('answer');
    expect(lookup.threshold).toBe(0.3);
    expect(lookup.segments[0]?.content).toContain('3 个工作日');
    expect(lookup.confidence).toBe(lookup.segments[0]?.score);
    for (const segment of lookup.segments) expect(segment.score).toBeGreaterThanOrEqual(0.3);
    expect(lookup.nearest).toBeNull();
    // Only the engine's fields: the hit test's explanations stay out of call records.
    expect(Object.keys(lookup.segments[0]!).sort()).toEqual(
      [
        'answer',
        'content',
        'documentId',
        'documentName',
        'id',
        'knowledgeBaseId',
        'question',
        'score',
      ].sort(),
    );
  });

  it('refuses below the threshold: nothing usable, the best candidate kept as the nearest', async () => {
    const own = knowledgeSource(t.db, { embedderFor: async () => undefined });
    // A threshold no candidate can reach: whatever ranked first is refused.
    const lookup = await own.retrieve(projectId, config({ scoreThreshold: 1 }), '光猫坏了去哪里修');
    expect(lookup.verdict).not.toBe('answer');
    expect(lookup.segments).toEqual([]);
    expect(lookup.nearest?.content).toContain('光猫');
    expect(lookup.confidence).toBe(lookup.nearest?.score);
    expect(lookup.confidence).toBeLessThan(1);
  });

  it('asks for the model’s help only when switched on, in 大模型模式, and when the runtime can build it', async () => {
    const asked: string[] = [];
    const assistFor = async (_projectId: string, c: AssistantConfig) => {
      asked.push(c.brain.providerId ?? '');
      return noopAssist;
    };
    expect(await llmAssistOf({ assistFor }, projectId, config({ llmAssist: false }, 'lp1'))).toBeUndefined();
    expect(await llmAssistOf({ assistFor }, projectId, config({ llmAssist: true }, null))).toBeUndefined();
    expect(await llmAssistOf({}, projectId, config({ llmAssist: true }, 'lp1'))).toBeUndefined();
    expect(asked).toEqual([]);
    expect(await llmAssistOf({ assistFor }, projectId, config({ llmAssist: true }, 'lp1'))).toBe(noopAssist);
    expect(asked).toEqual(['lp1']);
  });
});
