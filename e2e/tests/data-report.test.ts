import fs from 'node:fs';
import type {
  AssistantReport,
  CallDetail,
  CallinReport,
  CallList,
  KnowledgeGapTopic,
  KnowledgeReport,
  ReportDrill,
} from '@callpilot/contracts';
import ExcelJS from 'exceljs';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { chooseOption, expectVisible, openLoggedIn, textOf } from '../support/console';
import { demoSettled, openProjectApi, type ProjectApi } from '../support/project-api';

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let api: ProjectApi;

beforeAll(async () => {
  browser = await launchBrowser();
  api = await openProjectApi(baseUrl, inject('demoEmail'), inject('demoPassword'));
  await demoSettled(api, 170_000);
}, 180_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

const DAY_MS = 86_400_000;
/** A China calendar day (UTC+8), `offset` days from today: the reports' days. */
const chinaDay = (offset = 0) =>
  new Date(Date.now() + 8 * 3_600_000 + offset * DAY_MS).toISOString().slice(0, 10);
const LAST_7 = { from: chinaDay(-6), to: chinaDay(0) };
const LAST_30 = { from: chinaDay(-29), to: chinaDay(0) };
const count = (n: number) => n.toLocaleString('zh-CN');

/** The calls the call-record list shows for a drill (its total, as 共 N 条 counts them). */
async function listTotal(drill: ReportDrill): Promise<number> {
  const list = await api.get<CallList>(`/calls?${new URLSearchParams({ ...drill, pageSize: '1' })}`);
  return list.total;
}

/**
 * The inbound report of a range once its rollups have caught up with the calls: rollups are
 * rebuilt by a worker a couple of seconds after calls end, so this waits until the report's
 * offered calls are the calls its own drill lists, rather than sleeping.
 */
async function settledCallin(range: { from: string; to: string }): Promise<CallinReport> {
  let report: CallinReport | undefined;
  let listed = -1;
  await expect
    .poll(
      async () => {
        report = await api.get<CallinReport>(`/reports/callin?${new URLSearchParams(range)}`);
        const drill = report.figures.offered.drill;
        listed = drill ? await listTotal(drill) : -1;
        return report.figures.offered.value === listed && listed > 0;
      },
      { timeout: 30_000, interval: 1000, message: 'the inbound report should count the listed calls' },
    )
    .toBe(true);
  return report as CallinReport;
}

/** A figure card's number, by the link it carries to its calls (“呼入总量 40，查看通话”). */
const figureLink = (p: Page, title: string) =>
  p.getByRole('link', { name: new RegExp(`^${title} [\\d,.]+%?，查看通话$`) });

/** Clicks a chart at a point given in the chart's own pixels (ECharts draws into its element). */
async function clickChart(chart: Locator, x: number, y: number) {
  const box = await chart.boundingBox();
  if (!box) throw new Error('the chart is not on screen');
  await chart.page().mouse.click(box.x + x, box.y + y);
}

/** Saves a download the page starts with `click`: its suggested name and contents. */
async function download(p: Page, click: () => Promise<void>) {
  const [file] = await Promise.all([p.waitForEvent('download', { timeout: 20_000 }), click()]);
  const path = await file.path();
  return { name: file.suggestedFilename(), bytes: fs.readFileSync(path) };
}

describe('数据统计', () => {
  it('shows the inbound report, moves its range, drills from a chart to the calls and exports it', async () => {
    const week = await settledCallin(LAST_7);
    const month = await settledCallin(LAST_30);
    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;

    // From the sidebar: 数据统计 opens the inbound report on the last 7 days.
    await p.getByRole('link', { name: '数据统计', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/data-report/callin');
    await expectVisible(p.getByRole('heading', { name: '数据统计', level: 1 }), 'the section heading');
    await expectVisible(figureLink(p, '呼入总量'), 'the offered figure', 20_000);
    expect(await textOf(figureLink(p, '呼入总量'))).toBe(count(week.figures.offered.value));
    expect(await p.getByRole('button', { name: '近 7 天' }).getAttribute('aria-pressed')).toBe('true');

    // 近 30 天: the range goes into the URL and every figure follows it.
    await p.getByRole('button', { name: '近 30 天' }).click();
    await p.waitForURL((url) => url.searchParams.get('from') === LAST_30.from);
    expect(new URL(p.url()).searchParams.get('to')).toBe(LAST_30.to);
    await expect
      .poll(() => textOf(figureLink(p, '呼入总量')), { timeout: 10_000 })
      .toBe(count(month.figures.offered.value));
    // 40 demo calls over 30 days: the month holds more than its last week.
    expect(month.figures.offered.value).toBeGreaterThan(week.figures.offered.value);
    expect(await textOf(figureLink(p, '接通量'))).toBe(count(month.figures.answered.value));

    // 接听时效: the tallest bar is the bucket most calls were answered in; its count is in the table.
    const buckets = month.answeredWithin;
    const tallest = buckets.reduce((best, b, i) => (b.count > (buckets[best]?.count ?? 0) ? i : best), 0);
    const bucket = buckets[tallest]!;
    expect(bucket.count).toBeGreaterThan(0);
    const waitTable = p.getByRole('table', { name: '接听时效' });
    const bucketRow = waitTable.getByRole('row').filter({ hasText: bucket.label });
    expect(await textOf(bucketRow.getByRole('cell').nth(1))).toBe(count(bucket.count));

    // Click that bar just above the axis (grid: 48 px left, 24 right, 32 bottom; 220 px high).
    const chart = p.getByRole('img', { name: '接听时效分布图' });
    await chart.scrollIntoViewIfNeeded();
    const width = (await chart.boundingBox())?.width ?? 0;
    const plot = width - 48 - 24;
    await clickChart(chart, 48 + ((tallest + 0.5) * plot) / buckets.length, 220 - 32 - 3);
    await p.waitForURL((url) => url.pathname === '/call-record/list');
    await expectVisible(p.getByRole('heading', { name: '通话记录' }), 'the call record list');

    // The list carries the bar's filters as chips and counts the bar's calls.
    const chips = p.getByRole('region', { name: '报表筛选条件' });
    await expectVisible(chips, 'the drill-down chips');
    const chipText = await textOf(chips);
    expect(chipText).toContain('状态：已结束');
    expect(chipText).toContain('已接通：是');
    if (bucket.drill?.waitMax) expect(chipText).toContain(`等待 ≤ ${bucket.drill.waitMax} 秒`);
    if (bucket.drill?.waitMin) expect(chipText).toContain(`等待 ≥ ${bucket.drill.waitMin} 秒`);
    const search = new URL(p.url()).searchParams;
    for (const [key, value] of Object.entries(bucket.drill ?? {})) expect(search.get(key)).toBe(value);
    await expect
      .poll(() => textOf(p.locator('.ant-pagination-total-text')), { timeout: 15_000 })
      .toBe(`共 ${bucket.count} 条`);
    expect(await listTotal(bucket.drill!)).toBe(bucket.count);

    // Back on the report (same range), export it: a CSV with its header, an Excel workbook that opens.
    await p.goBack();
    await p.waitForURL((url) => url.pathname === '/data-report/callin');
    await expectVisible(figureLink(p, '呼入总量'), 'the report again');
    const csv = await download(p, () => p.getByRole('button', { name: '导出 CSV' }).click());
    expect(csv.name).toMatch(/\.csv$/);
    const lines = csv.bytes
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .split(/\r?\n/);
    expect(lines[0]).toBe('指标');
    expect(lines[1]).toContain(`本期（${LAST_30.from} 至 ${LAST_30.to}）`);
    expect(lines.find((line) => line.startsWith('来电量,'))?.split(',')[1]).toBe(
      String(month.figures.offered.value),
    );

    const xlsx = await download(p, () => p.getByRole('button', { name: '导出 Excel' }).click());
    expect(xlsx.name).toMatch(/\.xlsx$/);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(xlsx.bytes as unknown as ArrayBuffer);
    const sheet = workbook.getWorksheet('指标');
    expect(sheet).toBeDefined();
    expect(String(sheet?.getRow(1).getCell(2).value)).toBe(`本期（${LAST_30.from} 至 ${LAST_30.to}）`);
    expect(workbook.worksheets.map((ws) => ws.name)).toEqual(['指标', '趋势', '按号码', '按流程']);
  });

  it('shows the assistant report for the range the inbound report had', async () => {
    // Once its rollups have caught up: the first assistant's calls are the calls its drill lists.
    let report: AssistantReport | undefined;
    await expect
      .poll(
        async () => {
          report = await api.get<AssistantReport>(`/reports/assistant?${new URLSearchParams(LAST_30)}`);
          const first = report.rows.find((row) => row.version === null);
          return first !== undefined && first.calls > 0 && first.calls === (await listTotal(first.drill));
        },
        { timeout: 30_000, interval: 1000, message: 'the assistant report should count the listed calls' },
      )
      .toBe(true);
    const total = report!.rows.find((row) => row.version === null)!;
    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;
    await p.goto(`/data-report/callin?${new URLSearchParams(LAST_30)}`);
    // The range rides along to the next report's tab.
    await p.getByRole('link', { name: '小助手统计' }).click();
    await p.waitForURL((url) => url.pathname === '/data-report/assistant');
    expect(new URL(p.url()).searchParams.get('from')).toBe(LAST_30.from);

    const table = p.getByRole('table', { name: '小助手统计' });
    await expectVisible(table, 'the assistants table', 20_000);
    const row = table.getByRole('row').filter({ hasText: total.assistantName }).first();
    // The figure links to its calls, and the list counts the same.
    const calls = row.getByRole('link', { name: count(total.calls), exact: true }).first();
    await expectVisible(calls, `${total.assistantName}'s calls`);
    await calls.click();
    await p.waitForURL((url) => url.pathname === '/call-record/list');
    await expect
      .poll(() => textOf(p.locator('.ant-pagination-total-text')), { timeout: 15_000 })
      .toBe(`共 ${total.calls} 条`);
  });

  it('lists a question the knowledge base could not answer, links to its turn, and answers it with a new pair', async () => {
    const answer = '营业厅每天 9:00 至 18:00 营业，节假日照常。';
    const { baseId, baseName, callId } = await askUnansweredQuestion();
    const topic = await gapTopic(callId);
    expect(topic.knowledgeBaseId).toBe(baseId);
    const example = topic.examples.find((e) => e.callId === callId)!;
    expect(example).toBeDefined();

    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;
    await p.goto('/data-report/knowledge');
    await expectVisible(figureLink(p, '知识库提问'), 'the questions figure', 20_000);
    // Today's questions of the new base: the demo's own questions fill the last 7 days.
    await p.getByRole('button', { name: '今天', exact: true }).click();
    await p.waitForURL((url) => url.searchParams.get('from') === chinaDay(0));
    await chooseOption(p, p.getByLabel('知识库', { exact: true }), baseName);
    await p.waitForURL((url) => url.searchParams.get('knowledgeBaseId') === baseId);

    // The topic, its count and base; its example opens the call at the turn the caller asked.
    const item = p.getByRole('listitem', { name: topic.question, exact: true });
    await expectVisible(item, 'the gap topic');
    expect(await textOf(item)).toContain(`${topic.count} 次 · ${baseName}`);
    await item.getByRole('link', { name: `“${example.question}”` }).click();
    await p.waitForURL(
      (url) =>
        url.pathname === `/call-record/detail/${callId}` &&
        url.searchParams.get('turn') === String(example.turnIndex),
    );
    const turn = p
      .getByRole('list', { name: '对话记录' })
      .getByRole('listitem')
      .filter({ hasText: example.question })
      .first();
    await expectVisible(turn, 'the linked turn');
    await expect.poll(() => turn.getAttribute('aria-current')).toBe('location');
    expect(await turn.evaluate((element) => element === document.activeElement)).toBe(true);

    // 新建问答对: the caller's words become a pair with the answer, and the topic leaves the list.
    await p.goBack();
    await p.waitForURL((url) => url.pathname === '/data-report/knowledge');
    await expectVisible(item, 'the gap topic again');
    await item.getByRole('button', { name: '新建问答对' }).click();
    const dialog = p.getByRole('dialog', { name: '新建问答对' });
    await expectVisible(dialog, 'the 新建问答对 dialog');
    expect(await dialog.getByLabel('问题').inputValue()).toBe(topic.question);
    await dialog.getByLabel('答案').fill(answer);
    await dialog.getByRole('button', { name: '保存' }).click();
    await expectVisible(p.getByText('已新建问答对', { exact: true }), 'the saved toast');
    await expect.poll(() => item.count(), { timeout: 10_000 }).toBe(0);

    // The knowledge base lists the pair, and its hit test now answers the caller's words with it.
    await p.goto(`/knowledge/${baseId}`);
    await p.getByRole('tab', { name: '分段' }).click();
    await expectVisible(p.getByRole('row').filter({ hasText: answer }), 'the pair');

    await p.getByRole('tab', { name: '命中测试' }).click();
    await p.getByLabel('测试问题').fill(topic.question);
    await p.getByRole('button', { name: '测试', exact: true }).click();
    const results = p.getByRole('region', { name: '命中结果' });
    await expectVisible(results, 'the hit-test results');
    const first = results.getByRole('listitem').first();
    expect(await textOf(first)).toContain(answer);
    expect(await first.getByRole('progressbar').getAttribute('aria-label')).toBe('置信度 1.00');
  });
});

/**
 * A caller asks what the knowledge base does not answer, through the product's own paths: a base
 * holding one prose paragraph about installation (no questions, so the simulated caller asks the
 * everyday questions callers ask: opening hours, fees, where to go), an assistant that answers only
 * near-certain matches (0.95), and a 模拟通话 whose caller asks them.
 */
async function askUnansweredQuestion() {
  const suffix = Date.now().toString(36);
  const baseName = `宽带安装说明-${suffix}`;
  const base = await api.call<{ id: string }>('POST', '/knowledge-bases', { name: baseName });
  const form = new FormData();
  form.append(
    'files',
    new Blob(['宽带受理后 48 小时内上门安装，偏远地区 72 小时内。安装师傅上门前会电话预约时间。\n']),
    '安装说明.txt',
  );
  const uploaded = await fetch(
    `${baseUrl}/api/project/${api.projectId}/knowledge-bases/${base.id}/documents`,
    {
      method: 'POST',
      headers: api.headers,
      body: form,
    },
  );
  expect(uploaded.status).toBe(200);
  await expect
    .poll(
      async () =>
        (await api.get<{ items: { status: string }[] }>(`/knowledge-bases/${base.id}/documents`)).items.map(
          (d) => d.status,
        ),
      { timeout: 30_000, interval: 500 },
    )
    .toEqual(['ready']);

  const assistant = await api.call<{ id: string }>('POST', '/assistants', {
    name: `安装答疑-${suffix}`,
    use: 'outbound',
    templateKey: 'customer-follow-up',
    config: { knowledge: { baseIds: [base.id], topK: 3, scoreThreshold: 0.95 } },
  });
  const { callId } = await api.call<{ callId: string }>('POST', '/calls/test', {
    assistantId: assistant.id,
    persona: 'asks_question',
  });
  await expect
    .poll(async () => (await api.get<CallDetail>(`/calls/${callId}`)).status, { timeout: 60_000 })
    .toBe('ended');
  return { baseId: base.id, baseName, callId };
}

/** The gap topic holding a question of this call, once the rollup worker has listed it. */
async function gapTopic(callId: string): Promise<KnowledgeGapTopic> {
  const today = new URLSearchParams({ from: chinaDay(0), to: chinaDay(0) });
  let topic: KnowledgeGapTopic | undefined;
  await expect
    .poll(
      async () => {
        const gaps = await api.get<{ topics: KnowledgeGapTopic[] }>(`/reports/knowledge/gaps?${today}`);
        topic = gaps.topics.find((t) => t.examples.some((e) => e.callId === callId));
        return topic !== undefined;
      },
      { timeout: 30_000, interval: 1000, message: 'a knowledge gap from the simulated call' },
    )
    .toBe(true);
  // The knowledge report counts it too (the same rollup).
  const report = await api.get<KnowledgeReport>(`/reports/knowledge?${today}`);
  expect(report.figures.questions.value).toBeGreaterThan(0);
  return topic as KnowledgeGapTopic;
}
