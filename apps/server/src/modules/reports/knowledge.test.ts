import { randomUUID } from 'node:crypto';
import type { UsedSegment } from '@callpilot/contracts';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import {
  assistants,
  assistantVersions,
  calls,
  callTurns,
  knowledgeGaps,
  knowledgeStatsHourly,
} from '../../db/schema';
import { multipart } from '../knowledge/fixtures.test-helper';
import { drainKnowledgeQueue } from '../knowledge/worker';
import { groupQuestions } from './knowledge-topics';
import { recomputeKnowledgeHour } from './rollup-knowledge';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;

let t: TestApp;
let owner: { authorization: string };
let outsider: { authorization: string };
let projectA: string;
let projectB: string;
let baseId: string;

/** 2026-11-20 10:00 China time. */
const HOUR = new Date('2026-11-20T02:00:00Z');
const THRESHOLD = 0.5;

const FAQ_CSV = [
  '问题,答案',
  '宽带安装需要多长时间？,受理后一般在 3 个工作日内上门安装。',
  '光猫坏了怎么办？,光猫属于租用设备，故障可免费上门更换，请先报修。',
  '宽带资费有哪些套餐？,宽带有 100M、300M、1000M 三档套餐，详询营业厅。',
].join('\n');

const segment = (score: number, id = 'seg-1') => ({
  id,
  knowledgeBaseId: baseId,
  documentName: 'faq.csv',
  content: '宽带安装需要多长时间？',
  score,
});

type Turn = { callee: string } | { reply: UsedSegment[] } | { line: string };

async function seedCall(projectId: string, assistantId: string, turns: Turn[], startedAt = HOUR) {
  const id = randomUUID();
  await t.db.insert(calls).values({
    id,
    projectId,
    direction: 'inbound',
    callerNumber: '13800138000',
    calleeNumber: '02160880001',
    status: 'ended',
    startedAt,
    assistantId,
    assistantName: '客服',
    assistantVersion: 1,
  });
  await t.db.insert(callTurns).values(
    turns.map((turn, index) => {
      const base = { callId: id, index, startMs: index * 1000, endMs: index * 1000 + 900, dtmf: null };
      if ('callee' in turn) return { ...base, speaker: 'callee' as const, text: turn.callee, segments: [] };
      if ('reply' in turn) {
        return {
          ...base,
          speaker: 'assistant' as const,
          text: '好的',
          latency: { recognitionMs: 1, retrievalMs: 1, brainMs: 1, firstTokenMs: 1, synthesisMs: 1 },
          segments: turn.reply,
        };
      }
      return { ...base, speaker: 'assistant' as const, text: turn.line, segments: [] };
    }),
  );
  return id;
}

async function seedAssistant(projectId: string, knowledgeBaseIds: string[]) {
  const id = randomUUID();
  const config = { knowledge: { baseIds: knowledgeBaseIds, topK: 3, scoreThreshold: THRESHOLD } };
  await t.db
    .insert(assistants)
    .values({ id, projectId, name: '客服', use: 'inbound', config, publishedVersion: 1 });
  await t.db.insert(assistantVersions).values({
    assistantId: id,
    version: 1,
    projectId,
    name: '客服',
    use: 'inbound',
    config,
    draftRevision: 1,
  });
  return id;
}

async function data(
  headers: { authorization: string },
  method: 'GET' | 'POST',
  url: string,
  payload?: object,
) {
  const res = await t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

const reports = (project = projectA) => `/api/project/${project}/reports/knowledge`;
const RANGE = '?from=2026-11-20&to=2026-11-20';

beforeAll(async () => {
  t = await createTestApp();
  ({ projectId: projectA } = await seedUser(t.db, { email: 'kstats-owner@example.com' }));
  ({ projectId: projectB } = await seedUser(t.db, { email: 'kstats-outsider@example.com' }));
  owner = await loginAs(t.app, 'kstats-owner@example.com');
  outsider = await loginAs(t.app, 'kstats-outsider@example.com');

  baseId = (await data(owner, 'POST', `/api/project/${projectA}/knowledge-bases`, { name: '宽带 FAQ' })).id;
  const body = multipart([{ name: 'faq.csv', content: FAQ_CSV }]);
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/project/${projectA}/knowledge-bases/${baseId}/documents`,
    headers: { ...owner, ...body.headers },
    payload: body.payload,
  });
  expect(res.statusCode, res.body).toBe(200);
  await drainKnowledgeQueue(t.db);

  const assistantId = await seedAssistant(projectA, [baseId]);
  await seedCall(projectA, assistantId, [
    { line: '您好，这里是宽带客服' },
    { callee: '宽带安装需要多长时间？' },
    { reply: [segment(0.8)] },
    { callee: '宽带多少钱一个月' },
    { reply: [] },
    // Exactly at the threshold: answered.
    { callee: '光猫坏了怎么办' },
    { reply: [segment(THRESHOLD)] },
    // Just below (as an older threshold could have recorded it): not answered, the best segment kept.
    { callee: '你们的宽带资费贵不贵啊' },
    { reply: [segment(0.49, 'seg-low')] },
  ]);
  await seedCall(projectA, assistantId, [
    { line: '您好' },
    { callee: '宽带一个月多少钱' },
    { reply: [] },
    { callee: '营业厅周末几点开门' },
    { reply: [] },
    // A callee turn the assistant answered with a scripted line (no brain, no retrieval).
    { callee: '嗯' },
    { line: '感谢来电，再见' },
    // Silence: no words, no question.
    { callee: '' },
    { reply: [] },
  ]);
  // Another hour: not part of this hour's rollup.
  await seedCall(
    projectA,
    assistantId,
    [{ callee: '宽带多少钱一个月' }, { reply: [] }],
    new Date(HOUR.getTime() - 86_400_000 * 2),
  );
  await recomputeKnowledgeHour(t.db, projectA, HOUR);
  // Recomputing is idempotent: rows are rebuilt, never added to.
  await recomputeKnowledgeHour(t.db, projectA, new Date(HOUR.getTime() + 1234));
});

afterAll(async () => {
  await t.app.close();
});

describe('knowledge rollup', () => {
  it('counts questions, hits at or above the threshold and unanswered questions per base', async () => {
    const rows = await t.db
      .select()
      .from(knowledgeStatsHourly)
      .where(eq(knowledgeStatsHourly.projectId, projectA));
    expect(rows.sort((x, y) => x.knowledgeBaseId.localeCompare(y.knowledgeBaseId))).toEqual([
      // The project's own row: with one base, the base's figures.
      { projectId: projectA, hour: HOUR, knowledgeBaseId: '', questions: 6, hits: 2, noAnswer: 4 },
      { projectId: projectA, hour: HOUR, knowledgeBaseId: baseId, questions: 6, hits: 2, noAnswer: 4 },
    ]);
    const gaps = await t.db
      .select()
      .from(knowledgeGaps)
      .where(and(eq(knowledgeGaps.projectId, projectA), eq(knowledgeGaps.hour, HOUR)));
    expect(gaps.map((g) => g.question).sort()).toEqual(
      ['宽带多少钱一个月', '你们的宽带资费贵不贵啊', '宽带一个月多少钱', '营业厅周末几点开门'].sort(),
    );
    const low = gaps.find((g) => g.question === '你们的宽带资费贵不贵啊')!;
    expect(low.bestSegmentId).toBe('seg-low');
    expect(low.bestScore).toBeCloseTo(0.49);
    expect(gaps.find((g) => g.question === '宽带多少钱一个月')!.askedAt).toEqual(
      new Date(HOUR.getTime() + 3000),
    );
  });
  it('counts a question searched in two bases once in the project, and keeps the nearest segment of a gap', async () => {
    const hour = new Date('2026-11-21T02:00:00Z');
    const otherBase = (
      await data(owner, 'POST', `/api/project/${projectA}/knowledge-bases`, { name: '账单 FAQ' })
    ).id as string;
    const both = await seedAssistant(projectA, [baseId, otherBase]);
    const billing = { ...segment(0.3, 'seg-bill'), knowledgeBaseId: otherBase, content: '发票开具' };
    await seedCall(
      projectA,
      both,
      [
        { callee: '宽带安装需要多长时间？' },
        { reply: [segment(0.8)] },
        // Retrieval found only the other base's segment, below the threshold.
        { callee: '发票怎么开' },
        { reply: [billing] },
        { callee: '你们老板是谁' },
        { reply: [] },
      ],
      hour,
    );
    await recomputeKnowledgeHour(t.db, projectA, hour);

    const day = '?from=2026-11-21&to=2026-11-21';
    const report = await data(owner, 'GET', `${reports()}${day}`);
    expect(report.figures.questions.value).toBe(3);
    expect(report.figures.hitRate.value).toBeCloseTo(1 / 3);
    expect(report.figures.noAnswerRate.value).toBeCloseTo(2 / 3);
    expect(
      report.trend.points.find((p: { at: string }) => p.at === hour.toISOString()).values.questions,
    ).toBe(3);
    const byBase = Object.fromEntries(
      report.byKnowledgeBase.map((r: { key: string; values: Record<string, number> }) => [
        r.key,
        [r.values.questions, r.values.hits, r.values.noAnswer],
      ]),
    );
    expect(byBase).toEqual({ [baseId]: [3, 1, 2], [otherBase]: [3, 0, 2] });
    const narrowed = await data(owner, 'GET', `${reports()}${day}&knowledgeBaseId=${otherBase}`);
    expect(narrowed.figures.questions.value).toBe(3);
    expect(narrowed.figures.hitRate.value).toBe(0);

    const gaps = await t.db
      .select()
      .from(knowledgeGaps)
      .where(and(eq(knowledgeGaps.projectId, projectA), eq(knowledgeGaps.hour, hour)));
    const best = (question: string, base: string) =>
      gaps.find((g) => g.question === question && g.knowledgeBaseId === base)?.bestSegmentId;
    expect(gaps).toHaveLength(4);
    expect(best('发票怎么开', otherBase)).toBe('seg-bill');
    expect(best('发票怎么开', baseId)).toBe('seg-bill');
    expect(best('你们老板是谁', baseId)).toBeNull();
  });

  it('a question the knowledge refused is a gap with its nearest candidate, whatever that scored', async () => {
    const hour = new Date('2026-11-22T02:00:00Z');
    const assistantId = await seedAssistant(projectA, [baseId]);
    // Refused although its confidence cleared the threshold (the top hits disagreed): the call
    // recorded it as not used, so it is no hit, and it is what came nearest to the gap.
    const ambiguous = { ...segment(0.72, 'seg-ambiguous'), used: false };
    const weak = { ...segment(0.12, 'seg-weak'), used: false };
    await seedCall(
      projectA,
      assistantId,
      [
        { callee: '装宽带要几天' },
        { reply: [{ ...segment(0.8), used: true }] },
        { callee: '宽带那个装的和修的时间' },
        { reply: [ambiguous] },
        { callee: '你们卖手机吗' },
        { reply: [weak] },
      ],
      hour,
    );
    await recomputeKnowledgeHour(t.db, projectA, hour);
    const [stats] = await t.db
      .select()
      .from(knowledgeStatsHourly)
      .where(
        and(
          eq(knowledgeStatsHourly.projectId, projectA),
          eq(knowledgeStatsHourly.hour, hour),
          eq(knowledgeStatsHourly.knowledgeBaseId, baseId),
        ),
      );
    expect(stats).toMatchObject({ questions: 3, hits: 1, noAnswer: 2 });
    const gaps = await t.db
      .select()
      .from(knowledgeGaps)
      .where(and(eq(knowledgeGaps.projectId, projectA), eq(knowledgeGaps.hour, hour)));
    const byQuestion = Object.fromEntries(gaps.map((g) => [g.question, [g.bestSegmentId, g.bestScore]]));
    expect(byQuestion).toEqual({
      宽带那个装的和修的时间: ['seg-ambiguous', 0.72],
      你们卖手机吗: ['seg-weak', 0.12],
    });
  });
});

describe('knowledge report', () => {
  it('answers the figures with the previous period, the base, an hourly trend and the used segments', async () => {
    const report = await data(owner, 'GET', `${reports()}${RANGE}`);
    expect(report.figures.questions).toMatchObject({ value: 6, previous: 0 });
    expect(report.figures.questions.drill).toEqual({
      from: '2026-11-19T16:00:00.000Z',
      to: '2026-11-20T15:59:59.999Z',
    });
    // The previous figure's calls are the previous day's, never this range's.
    expect(report.figures.questions.previousDrill).toEqual({
      from: '2026-11-18T16:00:00.000Z',
      to: '2026-11-19T15:59:59.999Z',
    });
    expect(report.figures.hitRate.previousDrill).toBeNull();
    expect(report.figures.hitRate.value).toBeCloseTo(2 / 6);
    expect(report.figures.noAnswerRate.value).toBeCloseTo(4 / 6);
    expect(report.byKnowledgeBase).toEqual([
      expect.objectContaining({
        key: baseId,
        label: '宽带 FAQ',
        values: expect.objectContaining({ questions: 6 }),
      }),
    ]);
    expect(report.trend.granularity).toBe('hour');
    expect(report.trend.points).toHaveLength(24);
    expect(
      report.trend.points.find((p: { at: string }) => p.at === HOUR.toISOString()).values.questions,
    ).toBe(6);
    expect(report.topSegments[0]).toMatchObject({ segmentId: 'seg-1', hits: 2 });

    const daily = await data(owner, 'GET', `${reports()}?from=2026-11-01&to=2026-11-30&granularity=day`);
    expect(daily.trend.points).toHaveLength(30);
    expect(daily.trend.points[19]).toMatchObject({
      at: '2026-11-19T16:00:00.000Z',
      values: { questions: 6 },
    });
  });

  it('refuses a reversed range naming the field', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `${reports()}?from=2026-11-20&to=2026-11-19`,
      headers: owner,
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('结束日期不能早于开始日期');
  });

  it('exports csv and xlsx', async () => {
    const csv = await t.app.inject({
      method: 'GET',
      url: `${reports()}/export${RANGE}&format=csv`,
      headers: owner,
    });
    expect(csv.statusCode, csv.body).toBe(200);
    expect(csv.body).toContain('提问数');
    expect(csv.body).toContain('宽带 FAQ');
    expect(csv.body).toContain('营业厅周末几点开门');
    const xlsx = await t.app.inject({ method: 'GET', url: `${reports()}/export${RANGE}`, headers: owner });
    expect(xlsx.statusCode).toBe(200);
    expect(xlsx.headers['content-type']).toContain('spreadsheetml');
  });
});

describe('knowledge gaps', () => {
  it('groups near-duplicate questions and keeps an unrelated one apart', () => {
    const groups = groupQuestions(
      ['宽带多少钱一个月', '宽带一个月多少钱', '营业厅周末几点开门', '宽带一个月多少钱？'].map(
        (question) => ({ question }),
      ),
    );
    expect(groups.map((g) => g.map((q) => q.question))).toEqual([
      ['宽带多少钱一个月', '宽带一个月多少钱', '宽带一个月多少钱？'],
      ['营业厅周末几点开门'],
    ]);
  });

  it('lists topics with examples and a suggested pair; resolving as a similar question answers it', async () => {
    const list = await data(owner, 'GET', `${reports()}/gaps${RANGE}`);
    const price = list.topics.find((topic: { question: string }) => topic.question.includes('多少钱'));
    expect(price).toMatchObject({ knowledgeBaseId: baseId, knowledgeBaseName: '宽带 FAQ', count: 2 });
    expect(price.examples.map((e: { turnIndex: number }) => e.turnIndex).sort()).toEqual([1, 3]);
    const shop = list.topics.find((topic: { question: string }) => topic.question === '营业厅周末几点开门');
    expect(shop.count).toBe(1);
    expect(price.suggestedPair).not.toBeNull();
    expect(price.suggestedPair.score).toBeLessThan(THRESHOLD);

    const resolved = await data(owner, 'POST', `${reports()}/gaps/resolve`, {
      as: 'similar',
      topicId: price.id,
      documentId: price.suggestedPair.documentId,
      segmentId: price.suggestedPair.segmentId,
      question: price.question,
    });
    expect(resolved).toEqual({ segmentId: price.suggestedPair.segmentId, knowledgeBaseId: baseId });
    const hit = await data(owner, 'POST', `/api/project/${projectA}/knowledge-bases/${baseId}/hit-test`, {
      query: price.question,
      topK: 1,
    });
    expect(hit.segments[0].id).toBe(price.suggestedPair.segmentId);
    expect(hit.segments[0].score).toBeGreaterThanOrEqual(THRESHOLD);

    const after = await data(owner, 'GET', `${reports()}/gaps${RANGE}`);
    expect(after.topics.map((topic: { id: string }) => topic.id)).not.toContain(price.id);
    expect(after.topics.map((topic: { question: string }) => topic.question)).toContain('营业厅周末几点开门');
  });

  it('resolving as a new pair answers the question and removes the topic', async () => {
    const list = await data(owner, 'GET', `${reports()}/gaps${RANGE}`);
    const shop = list.topics.find((topic: { question: string }) => topic.question === '营业厅周末几点开门');
    await data(owner, 'POST', `${reports()}/gaps/resolve`, {
      as: 'pair',
      topicId: shop.id,
      knowledgeBaseId: baseId,
      question: '营业厅周末几点开门？',
      answer: '营业厅周末 9:00-17:00 营业。',
    });
    const after = await data(owner, 'GET', `${reports()}/gaps${RANGE}`);
    expect(after.topics.map((topic: { id: string }) => topic.id)).not.toContain(shop.id);
  });

  it('refuses a pair that does not exist', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `${reports()}/gaps/resolve`,
      headers: owner,
      payload: { as: 'similar', topicId: 'x', documentId: 'no-such-pair', question: '宽带' },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().message).toBe('问答对不存在');
  });
});

describe('isolation', () => {
  it('a member of another project cannot read the reports or gaps, nor resolve into its base', async () => {
    for (const path of ['', '/gaps', '/export']) {
      const res = await t.app.inject({
        method: 'GET',
        url: `${reports()}${path}${RANGE}`,
        headers: outsider,
      });
      expect(res.statusCode, path).toBe(403);
    }
    const own = await data(outsider, 'GET', `${reports(projectB)}/gaps${RANGE}`);
    expect(own).toEqual({ topics: [], total: 0 });
    const ownReport = await data(outsider, 'GET', `${reports(projectB)}${RANGE}`);
    expect(ownReport.figures.questions.value).toBe(0);

    const topic = { id: 'any' };
    const intoA = await t.app.inject({
      method: 'POST',
      url: `${reports(projectB)}/gaps/resolve`,
      headers: outsider,
      payload: {
        as: 'pair',
        topicId: topic.id,
        knowledgeBaseId: baseId,
        question: '别人的问题',
        answer: '别人的答案',
      },
    });
    expect(intoA.statusCode).toBe(404);
    const [pair] = (
      await data(owner, 'GET', `/api/project/${projectA}/knowledge-bases/${baseId}/segments?pageSize=1`)
    ).items;
    const similarIntoA = await t.app.inject({
      method: 'POST',
      url: `${reports(projectB)}/gaps/resolve`,
      headers: outsider,
      payload: {
        as: 'similar',
        topicId: topic.id,
        documentId: pair.documentId,
        segmentId: pair.id,
        question: '别人的问题',
      },
    });
    expect(similarIntoA.statusCode).toBe(404);
    const direct = await t.app.inject({
      method: 'POST',
      url: `${reports()}/gaps/resolve`,
      headers: outsider,
      payload: {
        as: 'pair',
        topicId: topic.id,
        knowledgeBaseId: baseId,
        question: '别人的问题',
        answer: '别人的答案',
      },
    });
    expect(direct.statusCode).toBe(403);
  });
});
