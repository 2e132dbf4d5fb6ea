import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { chooseOption, expectVisible, openLoggedIn, textOf } from '../support/console';
import { openProjectApi, type ProjectApi } from '../support/project-api';
import { tempDir } from '../support/server';

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let filesDir: string;
let api: ProjectApi;

const PAIRS_CSV = [
  '问题,答案',
  '积分可以转让给别人吗？,积分仅限本人账户使用，不能转让、合并或兑换现金。',
  '积分可以兑换什么？,积分可以在积分商城兑换优惠券、会员周边和合作品牌礼品。',
  '会员等级怎么划分？,会员分为普通、银卡、金卡三级，年消费满 2000 元升银卡。',
].join('\r\n');
// Added after the first run: the answer the first run could not find.
const ADDED_CSV = ['问题,答案', '会员卡丢了怎么补办？,请携带身份证到服务台补办，新卡当场发放。'].join('\r\n');

const ANSWERED = '积分可以转让给别人吗？';
const MISSING = '会员卡丢了怎么补办？';
const UNANSWERABLE = '明天的股市行情怎么样';
const QUESTIONS_FILE = '回归问题.csv';
// One question the base answers, one it cannot yet, one it should refuse (no expected answer).
const QUESTIONS_CSV = `\uFEFF问题,期望答案\r\n${ANSWERED},不能转让\r\n${MISSING},携带身份证到服务台补办\r\n${UNANSWERABLE},\r\n`;

async function uploadPairs(baseId: string, fileName: string, csv: string) {
  const form = new FormData();
  form.append('files', new Blob([csv], { type: 'text/csv' }), fileName);
  const res = await fetch(`${baseUrl}/api/project/${api.projectId}/knowledge-bases/${baseId}/documents`, {
    method: 'POST',
    headers: api.headers,
    body: form,
  });
  expect(res.status, await res.clone().text()).toBe(200);
  await expect
    .poll(
      async () => {
        const docs = await api.get<{ items: { fileName: string; status: string }[] }>(
          `/knowledge-bases/${baseId}/documents?pageSize=100`,
        );
        return docs.items.find((d) => d.fileName === fileName)?.status;
      },
      { timeout: 30_000 },
    )
    .toBe('ready');
}

beforeAll(async () => {
  browser = await launchBrowser();
  filesDir = tempDir('knowledge-batch-files');
  fs.writeFileSync(path.join(filesDir, QUESTIONS_FILE), QUESTIONS_CSV);
  api = await openProjectApi(baseUrl, inject('demoEmail'), inject('demoPassword'));
});
afterAll(async () => {
  await browser?.close();
  if (filesDir) fs.rmSync(filesDir, { recursive: true, force: true });
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

describe('knowledge batch test', () => {
  it('runs a question list, shows figures and items, and after an edit shows the improvement', async () => {
    const base = await api.call<{ id: string }>('POST', '/knowledge-bases', {
      name: `批量测试库-${Date.now()}`,
    });
    await uploadPairs(base.id, '积分问答.csv', PAIRS_CSV);

    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;
    await p.goto(`/knowledge/${base.id}?tab=batch-test`);
    expect(await p.getByRole('tab', { name: '批量测试' }).getAttribute('aria-selected')).toBe('true');
    await expectVisible(p.getByText(/^还没有批量测试/), 'the empty state');

    // The template comes from the server, as a file named for the user.
    const [template] = await Promise.all([
      p.waitForEvent('download'),
      p.getByRole('button', { name: '下载模板' }).first().click(),
    ]);
    expect(template.suggestedFilename()).toBe('批量测试模板.csv');

    // First run, at the default threshold.
    expect(await p.getByLabel('置信度阈值').inputValue()).toBe('0.30');
    await p.locator('input[type=file]').setInputFiles(path.join(filesDir, QUESTIONS_FILE));
    const runRow = () => p.getByRole('row').filter({ hasText: QUESTIONS_FILE });
    await expectVisible(runRow().first().getByText('已完成', { exact: true }), 'the first run done', 30_000);

    const detail = p.getByRole('region', { name: '测试详情' });
    const figure = (title: string) =>
      detail.locator('.ant-statistic').filter({ has: p.locator('.ant-statistic-title', { hasText: title }) });
    const figureValue = async (title: string) => textOf(figure(title).locator('.ant-statistic-content'));
    expect(await figureValue('回答正确率')).toBe('50.0%');
    expect(await figureValue('答错')).toBe('0');
    expect(await figureValue('应答未答')).toBe('1');
    expect(await figureValue('正确拒答')).toBe('1');
    expect(await figureValue('不应答却答了')).toBe('0');
    expect(await textOf(detail.locator('header'))).toContain('共 3 个问题（应回答 2，不应回答 1）');

    const items = p.getByRole('region', { name: '逐题结果' });
    const itemRow = (question: string) => items.getByRole('row').filter({ hasText: question });
    await expectVisible(itemRow(ANSWERED), 'the answered question');
    expect(await textOf(itemRow(ANSWERED))).toContain('回答正确');
    expect(await textOf(itemRow(MISSING))).toContain('应答未答');
    expect(await textOf(itemRow(UNANSWERABLE))).toContain('正确拒答');
    expect(await textOf(itemRow(UNANSWERABLE))).toContain('（不应回答）');

    // Filter by outcome: only the refused answerable question is left.
    await chooseOption(p, p.getByRole('combobox', { name: '按结果筛选' }), '应答未答');
    await expect.poll(() => items.getByRole('row').filter({ hasText: ANSWERED }).count()).toBe(0);
    expect(await itemRow(MISSING).count()).toBe(1);

    // The operator adds the missing answer to the base, then tests again.
    await uploadPairs(base.id, '补充问答.csv', ADDED_CSV);
    await p.locator('input[type=file]').setInputFiles(path.join(filesDir, QUESTIONS_FILE));
    await expect.poll(() => runRow().count(), { timeout: 10_000 }).toBe(2);
    await expect
      .poll(() => runRow().getByText('已完成', { exact: true }).count(), { timeout: 30_000 })
      .toBe(2);
    await expect.poll(() => figureValue('回答正确率'), { timeout: 10_000 }).toBe('100.0%');
    expect(await figureValue('应答未答')).toBe('0');

    // Compared with the first run: the figures went up and the question is listed as improved.
    await chooseOption(
      p,
      p.getByRole('combobox', { name: '选择之前的一次测试' }),
      new RegExp(QUESTIONS_FILE),
    );
    const changes = p.getByLabel('指标变化');
    await expectVisible(changes, 'the metric changes');
    expect(await textOf(changes)).toContain('回答正确率+50.0%');
    expect(await textOf(changes)).toContain('应答未答-1');
    const improved = p.getByRole('region', { name: '变好的问题' });
    expect(await textOf(improved)).toContain('变好的问题（1）');
    expect(await textOf(improved)).toContain(`${MISSING}应答未答 → 回答正确`);
    expect(await textOf(p.getByRole('region', { name: '变差的问题' }))).toContain('变差的问题（0）');
  });
});
