import type {
  KnowledgeBatchComparison,
  KnowledgeBatchItem,
  KnowledgeBatchMetrics,
  KnowledgeBatchTest,
} from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ok } from '@/test/fake-server';
import {
  makeBase,
  makeDocument,
  openLimits,
  paged,
  ROOT,
  renderKnowledge,
  serveKnowledge,
  signIn,
} from './knowledge-test-data';

let server: ReturnType<typeof serveKnowledge> | undefined;

beforeEach(signIn);

afterEach(() => {
  server?.stop();
  server = undefined;
  vi.restoreAllMocks();
});

const BASE = `${ROOT}/kb1`;
const TESTS = `${BASE}/batch-tests`;

function metrics(overrides: Partial<KnowledgeBatchMetrics> = {}): KnowledgeBatchMetrics {
  return {
    total: 4,
    answerable: 3,
    unanswerable: 1,
    recallAt1: 1 / 3,
    recallAt3: 2 / 3,
    correct: 1,
    wrong: 1,
    refused: 1,
    refusedCorrectly: 1,
    answeredUnanswerable: 0,
    wrongRate: 1 / 3,
    unanswerableAnsweredRate: 0,
    ...overrides,
  };
}

function makeRun(overrides: Partial<KnowledgeBatchTest> = {}): KnowledgeBatchTest {
  return {
    id: 't1',
    knowledgeBaseId: 'kb1',
    fileName: '回归题.csv',
    status: 'done',
    progress: 100,
    error: '',
    skipped: 0,
    threshold: 0.3,
    mode: 'fulltext',
    llmProviderId: null,
    metrics: metrics(),
    createdAt: '2026-03-01T02:00:00.000Z',
    finishedAt: '2026-03-01T02:00:05.000Z',
    ...overrides,
  };
}

const ITEMS: KnowledgeBatchItem[] = [
  {
    position: 1,
    question: '周末上班吗',
    expected: '周六上午有人值班',
    outcome: 'correct',
    verdict: 'answer',
    confidence: 0.82,
    expectedRank: 1,
    topSegmentId: 's2',
    topText: '周末上班吗？',
  },
  {
    position: 2,
    question: '退货运费谁出',
    expected: '质量问题由我们承担运费',
    outcome: 'wrong',
    verdict: 'answer',
    confidence: 0.55,
    expectedRank: 3,
    topSegmentId: 's1',
    topText: '商品签收后 7 天内可无理由退货',
  },
  {
    position: 3,
    question: '你们老板是谁',
    expected: null,
    outcome: 'refused_correctly',
    verdict: 'no_match',
    confidence: 0,
    expectedRank: null,
    topSegmentId: null,
    topText: null,
  },
];

const common = {
  'GET /api/project/p1/balance-limit': ok(openLimits),
  [`GET ${BASE}`]: ok(makeBase()),
  [`GET ${BASE}/documents`]: ok(paged([makeDocument()], 1)),
};

function openTab() {
  renderKnowledge('/knowledge/kb1?tab=batch-test');
}

function captureDownloads() {
  // jsdom has no object URLs and does not navigate; the saved file is what the link asked for.
  Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:batch'), revokeObjectURL: vi.fn() });
  const saved: string[] = [];
  vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
    saved.push(this.download);
  });
  return saved;
}

const runRow = (fileName: string) =>
  screen
    .getAllByText(fileName)
    .map((el) => el.closest('tr'))
    .find((tr): tr is HTMLTableRowElement => tr !== null) as HTMLElement;

describe('knowledge base page: batch test', () => {
  it('explains the batch test when there is none and offers the template', async () => {
    server = serveKnowledge({
      ...common,
      [`GET ${TESTS}`]: ok(paged([], 0)),
      [`GET ${TESTS}/template.csv`]: { status: 200, body: '问题,期望答案\n' },
    });
    const saved = captureDownloads();
    openTab();

    expect(await screen.findByText(/还没有批量测试。批量测试用一份问题列表检验知识库/)).toBeTruthy();
    expect(screen.getByRole('tab', { name: '批量测试', selected: true })).toBeTruthy();
    const buttons = screen.getAllByRole('button', { name: '下载模板' });
    fireEvent.click(buttons[buttons.length - 1] as HTMLElement);
    await waitFor(() => expect(saved).toEqual(['批量测试模板.csv']));
    expect(server.requests.find((r) => r.url === `${TESTS}/template.csv`)?.headers.Authorization).toBe(
      'Bearer tok-1',
    );
  });

  it('uploads a list with the chosen threshold, follows the run while it runs, then shows figures and items', async () => {
    let runs: KnowledgeBatchTest[] = [];
    let polls = 0;
    server = serveKnowledge({
      ...common,
      [`GET ${TESTS}`]: () => {
        polls += 1;
        // Running on the first look after the upload, done on the next.
        if (runs.length && polls > 2) runs = [makeRun({ skipped: 2 })];
        return ok(paged(runs, runs.length, 1, 10));
      },
      [`POST ${TESTS}`]: () => {
        runs = [
          makeRun({
            status: 'running',
            progress: 40,
            skipped: 2,
            finishedAt: null,
            metrics: metrics({ correct: 0 }),
          }),
        ];
        polls = 0;
        return ok(runs[0]);
      },
      [`GET ${TESTS}/t1/items`]: (request) => {
        const outcome = (request.config.params as { outcome?: string }).outcome;
        const items = outcome ? ITEMS.filter((i) => i.outcome === outcome) : ITEMS;
        return ok(paged(items, items.length));
      },
      [`GET ${TESTS}/t1/skipped.csv`]: { status: 200, body: '行号,问题,原因\n' },
    });
    const saved = captureDownloads();
    openTab();
    await screen.findByText(/还没有批量测试/);

    fireEvent.change(screen.getByLabelText('置信度阈值'), { target: { value: '0.5' } });
    const input = document.querySelector('input[type="file"]') as HTMLInputElement;
    expect(input.accept).toBe('.csv,.xlsx');
    fireEvent.change(input, {
      target: { files: [new File(['问题,期望答案\n周末上班吗,周六'], '回归题.csv')] },
    });

    // While running: a progress bar in the list and a note in the detail.
    expect(await screen.findByLabelText('测试进度 40%')).toBeTruthy();
    expect(screen.getByText('测试进行中（40%），结果会随进度刷新')).toBeTruthy();
    const post = server.requests.find((r) => r.method === 'POST');
    const form = post?.body as FormData;
    expect(form.get('scoreThreshold')).toBe('0.5');
    expect((form.get('file') as File).name).toBe('回归题.csv');

    // Polled until done.
    await waitFor(() => expect(within(runRow('回归题.csv')).getByText('已完成')).toBeTruthy(), {
      timeout: 5000,
    });
    const row = within(runRow('回归题.csv'));
    // 回答正确率 and 召回@1 are both one in three.
    expect(row.getAllByText('33.3%')).toHaveLength(2);
    expect(row.getByText('66.7%')).toBeTruthy();
    const afterDone = polls;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(polls).toBeLessThanOrEqual(afterDone + 1);

    const detail = screen.getByRole('region', { name: '测试详情' });
    expect(within(detail).getByText('回归题.csv 的测试结果')).toBeTruthy();
    const figure = (title: string) =>
      within(detail)
        .getByText(title, { selector: '.ant-statistic-title' })
        .closest('.ant-statistic') as HTMLElement;
    expect(within(figure('回答正确率')).getByText('33.3%')).toBeTruthy();
    expect(within(figure('召回@3')).getByText('66.7%')).toBeTruthy();
    expect(within(figure('答错')).getByText('1')).toBeTruthy();
    expect(within(figure('不应答却答了')).getByText('0')).toBeTruthy();

    const table = within(screen.getByRole('region', { name: '逐题结果' }));
    expect(await table.findByText('周末上班吗')).toBeTruthy();
    expect(table.getByText('（不应回答）')).toBeTruthy();
    expect(table.getByText('商品签收后 7 天内可无理由退货')).toBeTruthy();
    fireEvent.mouseDown(screen.getByLabelText('按结果筛选'));
    fireEvent.click(await screen.findByTitle('答错'));
    await waitFor(() => expect(table.queryByText('周末上班吗')).toBeNull());
    expect(table.getByText('退货运费谁出')).toBeTruthy();
    const lastItems = server.requests.filter((r) => r.url === `${TESTS}/t1/items`).at(-1);
    expect(lastItems?.config.params).toEqual({ page: 1, pageSize: 20, outcome: 'wrong' });

    expect(within(detail).getByText(/上传文件中有 2 行被跳过/)).toBeTruthy();
    fireEvent.click(within(detail).getByRole('button', { name: '下载跳过的行' }));
    await waitFor(() => expect(saved).toEqual(['跳过的行.csv']));
  });

  it('compares a run with an earlier one: deltas and the questions that got better or worse', async () => {
    const earlier = makeRun({ id: 't1', fileName: '第一轮.csv', metrics: metrics() });
    const later = makeRun({
      id: 't2',
      fileName: '第二轮.csv',
      createdAt: '2026-03-02T02:00:00.000Z',
      metrics: metrics({ correct: 2, wrong: 0, recallAt1: 2 / 3 }),
    });
    const comparison: KnowledgeBatchComparison = {
      current: later,
      previous: earlier,
      common: 4,
      improved: [{ question: '退货运费谁出', before: 'wrong', after: 'correct' }],
      regressed: [{ question: '你们老板是谁', before: 'refused_correctly', after: 'answered_unanswerable' }],
    };
    server = serveKnowledge({
      ...common,
      [`GET ${TESTS}`]: ok(paged([later, earlier], 2, 1, 10)),
      [`GET ${TESTS}/t2/items`]: ok(paged(ITEMS, 3)),
      [`GET ${TESTS}/t2/compare`]: ok(comparison),
    });
    openTab();

    expect(await screen.findByText('第二轮.csv 的测试结果')).toBeTruthy();
    fireEvent.mouseDown(screen.getByLabelText('选择之前的一次测试'));
    fireEvent.click(await screen.findByTitle(/ · 第一轮\.csv$/));

    const changes = await screen.findByLabelText('指标变化');
    const delta = (label: string) =>
      (within(changes).getByText(label).nextElementSibling as HTMLElement).textContent;
    expect(delta('回答正确率')).toBe('+33.3%');
    expect(delta('召回@1')).toBe('+33.3%');
    expect(delta('答错')).toBe('-1');
    expect(delta('不应答却答了')).toBe('±0');
    expect(screen.getByText('两次测试共有 4 个相同的问题')).toBeTruthy();

    const better = screen.getByRole('region', { name: '变好的问题' });
    expect(within(better).getByText('变好的问题（1）')).toBeTruthy();
    expect(within(better).getByText('退货运费谁出')).toBeTruthy();
    expect(within(better).getByText('答错 → 回答正确')).toBeTruthy();
    const worse = screen.getByRole('region', { name: '变差的问题' });
    expect(within(worse).getByText('正确拒答 → 不应答却答了')).toBeTruthy();
    expect(server.requests.find((r) => r.url === `${TESTS}/t2/compare`)?.config.params).toEqual({
      with: 't1',
    });
  });

  it('deletes a run after confirming', async () => {
    let runs = [makeRun()];
    server = serveKnowledge({
      ...common,
      [`GET ${TESTS}`]: () => ok(paged(runs, runs.length, 1, 10)),
      [`GET ${TESTS}/t1/items`]: ok(paged(ITEMS, 3)),
      [`DELETE ${TESTS}/t1`]: () => {
        runs = [];
        return ok(null);
      },
    });
    openTab();

    fireEvent.click(within(await waitFor(() => runRow('回归题.csv'))).getByRole('button', { name: '删除' }));
    const confirm = await screen.findByText('删除这次测试？');
    fireEvent.click(
      within(confirm.closest('.ant-popover') as HTMLElement).getByRole('button', { name: '删除' }),
    );

    expect(await screen.findByText(/还没有批量测试/)).toBeTruthy();
    expect(server.requests.some((r) => r.method === 'DELETE' && r.url === `${TESTS}/t1`)).toBe(true);
  });
});
