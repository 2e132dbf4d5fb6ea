import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { expectVisible, openLoggedIn, textOf } from '../support/console';
import { tempDir } from '../support/server';

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let filesDir: string;

// What a user uploads: a Chinese FAQ in Markdown, a question-answer sheet, and two files the
// console must refuse: one by its type (in the browser), one by its content (on the server).
const FAQ_FILE = '会员积分规则.md';
const FAQ = `# 会员积分规则

本规则适用于星河商城的全体注册会员，自 2026 年 1 月 1 日起施行，最终解释权归星河商城所有。

**积分怎么获得？** 会员每消费 1 元可获得 1 积分；评价晒单每次再奖励 10 积分；生日当月消费享双倍积分。

**积分怎么使用？** 每 100 积分可抵扣 1 元，在结算页勾选“使用积分”即可，单笔订单最多抵扣订单金额的 50%。

**积分的有效期** 积分有效期为 24 个月，自获得之日起计算，逾期未使用的积分将自动清零，清零前 30 天短信提醒。

**退货后积分怎么处理？** 订单退货后，该订单获得的积分会被扣回；已用积分抵扣的金额按比例退回积分账户。
`;
const QA_FILE = '积分问答.csv';
const QA_PAIRS: [string, string][] = [
  ['积分可以兑换什么？', '积分可以在积分商城兑换优惠券、会员周边和合作品牌礼品。'],
  ['积分可以转让给别人吗？', '积分仅限本人账户使用，不能转让、合并或兑换现金。'],
  ['会员等级怎么划分？', '会员分为普通、银卡、金卡三级，年消费满 2000 元升银卡，满 5000 元升金卡。'],
];
// With a BOM and CRLF, as Excel saves it; the last answer is quoted, as a spreadsheet would quote it.
const QA_CSV = `\uFEFF问题,答案\r\n${QA_PAIRS.map(([q, a], i) => (i === 2 ? `${q},"${a}"` : `${q},${a}`)).join('\r\n')}\r\n`;
const EXE_FILE = '报价.exe';
const FAKE_PDF_FILE = '合同.pdf';

const UNSUPPORTED = '不支持的文件类型，仅支持 txt、md、pdf、docx、csv、xlsx';

beforeAll(async () => {
  browser = await launchBrowser();
  filesDir = tempDir('knowledge-files');
  fs.writeFileSync(path.join(filesDir, FAQ_FILE), FAQ);
  fs.writeFileSync(path.join(filesDir, QA_FILE), QA_CSV);
  // A Windows executable's first bytes, and a text file wearing a .pdf name.
  fs.writeFileSync(path.join(filesDir, EXE_FILE), Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00]));
  fs.writeFileSync(path.join(filesDir, FAKE_PDF_FILE), '这不是 PDF，只是改了扩展名的一段文字。');
});
afterAll(async () => {
  await browser?.close();
  if (filesDir) fs.rmSync(filesDir, { recursive: true, force: true });
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

describe('knowledge bases', () => {
  it('creates a base, indexes uploaded files, refuses bad ones, and answers a hit test', async () => {
    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;
    const name = `会员积分知识库-${Date.now()}`;

    // From the sidebar to the list.
    await p.getByRole('link', { name: '知识库', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/knowledge/list');
    await expectVisible(p.getByRole('heading', { name: '知识库', exact: true }), 'the list heading');
    expect(await p.getByRole('link', { name: '知识库', exact: true }).getAttribute('aria-current')).toBe(
      'page',
    );

    // 新建知识库: a modal with the name, a description and the chunking settings.
    await p.getByRole('button', { name: '新建知识库', exact: true }).first().click();
    const dialog = p.getByRole('dialog', { name: '新建知识库' });
    await expectVisible(dialog, 'the 新建知识库 dialog');
    await dialog.getByLabel('知识库名称').fill(name);
    await dialog.getByLabel('描述').fill('会员积分的获得、使用、有效期与退货规则');
    // Small segments, so each paragraph of the FAQ is a segment of its own and the hit test must choose.
    await dialog.getByLabel('分段长度').fill('100');
    await dialog.getByLabel('分段重叠').fill('0');
    await dialog.getByRole('button', { name: '创建' }).click();
    await p.waitForURL((url) => /^\/knowledge\/[0-9a-f-]{36}$/.test(url.pathname));
    const detailPath = new URL(p.url()).pathname;
    await expectVisible(p.getByText('知识库已创建，现在可以上传文档', { exact: true }), 'the created toast');
    expect(await p.getByRole('dialog', { name: '新建知识库' }).count()).toBe(0);

    // Back in the list it is a row; its name opens it.
    await p.getByRole('link', { name: '返回知识库列表' }).click();
    await p.waitForURL((url) => url.pathname === '/knowledge/list');
    const listRow = p.getByRole('row').filter({ hasText: name });
    await expectVisible(listRow, 'the new base in the list');
    expect(await textOf(listRow)).toContain('会员积分的获得、使用、有效期与退货规则');
    await listRow.getByRole('link', { name }).click();
    await p.waitForURL((url) => url.pathname === detailPath);
    await expectVisible(p.getByRole('heading', { name, level: 1 }), 'the base heading');
    const summary = p.getByText(/^文档 \d+ 个 · 分段 \d+ 个/);
    expect(await textOf(summary)).toBe('文档 0 个 · 分段 0 个 · 分段长度 100 · 重叠 0');
    expect(await p.getByRole('tab', { name: '文档' }).getAttribute('aria-selected')).toBe('true');
    await expectVisible(
      p.getByText('还没有文档，请在上方上传', { exact: true }),
      'the empty documents table',
    );

    // Four files at once through the upload area's file input.
    await p
      .locator('input[type=file]')
      .setInputFiles([FAQ_FILE, QA_FILE, EXE_FILE, FAKE_PDF_FILE].map((file) => path.join(filesDir, file)));
    const notice = p.getByRole('alert').filter({ hasText: '未能上传' });
    await expectVisible(notice, 'the upload result', 20_000);
    expect(await textOf(notice.getByText(/^已上传/))).toBe('已上传 2 个文件，2 个文件未能上传');
    const noticeLine = async (file: string) => textOf(notice.getByRole('listitem').filter({ hasText: file }));
    expect(await noticeLine(FAQ_FILE)).toBe(`${FAQ_FILE}：已加入解析队列`);
    expect(await noticeLine(QA_FILE)).toBe(`${QA_FILE}：已加入解析队列`);
    // Refused by type in the browser, and by content on the server, each with its reason.
    expect(await noticeLine(EXE_FILE)).toBe(`${EXE_FILE}：${UNSUPPORTED}`);
    expect(await noticeLine(FAKE_PDF_FILE)).toBe(`${FAKE_PDF_FILE}：文件内容不是 PDF，${UNSUPPORTED}`);

    // The good files are listed and become 可用 as the table polls; the refused ones never appear.
    const docRow = (file: string) => p.getByRole('row').filter({ hasText: file });
    for (const file of [FAQ_FILE, QA_FILE]) {
      await expectVisible(
        docRow(file).getByRole('cell', { name: '可用', exact: true }),
        `${file} 可用`,
        30_000,
      );
    }
    expect(await docRow(EXE_FILE).count()).toBe(0);
    expect(await docRow(FAKE_PDF_FILE).count()).toBe(0);
    // The sheet is read as question-answer pairs, one segment per row.
    expect(await textOf(docRow(QA_FILE).getByRole('cell').nth(1))).toBe('CSV问答对');
    expect(await textOf(docRow(QA_FILE).getByRole('cell').nth(3))).toBe('3');
    expect(await textOf(docRow(FAQ_FILE).getByRole('cell').nth(1))).toBe('MD');
    // The FAQ's five paragraphs (the title joins the first) at 100 characters a segment.
    expect(await textOf(docRow(FAQ_FILE).getByRole('cell').nth(3))).toBe('5');
    await expect
      .poll(() => textOf(summary), { timeout: 10_000 })
      .toBe('文档 2 个 · 分段 8 个 · 分段长度 100 · 重叠 0');

    // 分段: the sheet's pairs, as question and answer, filtered by document.
    await p.getByRole('tab', { name: '分段' }).click();
    // The filter is searchable: type part of the file name and pick the match with Enter.
    const documentFilter = p.getByRole('combobox', { name: '按文档筛选' });
    await documentFilter.click();
    await expect.poll(() => p.getByRole('option', { name: QA_FILE }).count()).toBe(1);
    await documentFilter.fill('积分问答');
    await documentFilter.press('Enter');
    await expectVisible(p.getByText('共 3 条', { exact: true }), 'three segments of the sheet');
    for (const [question, answer] of QA_PAIRS) {
      const row = p.getByRole('row').filter({ hasText: question });
      expect(await textOf(row.getByRole('definition').first())).toBe(question);
      expect(await textOf(row.getByRole('definition').nth(1))).toBe(answer);
      expect(await textOf(row)).toContain(QA_FILE);
      expect(await row.getByRole('switch').getAttribute('aria-checked')).toBe('true');
    }
    expect(await p.getByText('积分有效期为 24 个月').count()).toBe(0);

    // Disable one pair with its switch; it stays off after a reload (the server keeps it).
    const [disabledQuestion] = QA_PAIRS[0]!;
    const disabledSwitch = p.getByRole('row').filter({ hasText: disabledQuestion }).getByRole('switch');
    const [saved] = await Promise.all([
      p.waitForResponse((res) => res.request().method() === 'PUT' && /\/segments\//.test(res.url())),
      disabledSwitch.click(),
    ]);
    expect(saved.status()).toBe(200);
    await expect.poll(() => disabledSwitch.getAttribute('aria-checked')).toBe('false');
    await p.reload();
    await expectVisible(
      p.getByText(disabledQuestion, { exact: true }),
      'the disabled segment after a reload',
    );
    expect(await textOf(p.getByText(/^共 \d+ 条$/))).toBe('共 8 条');
    expect(
      await p
        .getByRole('row')
        .filter({ hasText: disabledQuestion })
        .getByRole('switch')
        .getAttribute('aria-checked'),
    ).toBe('false');
    expect(
      await p
        .getByRole('row')
        .filter({ hasText: QA_PAIRS[1]![0] })
        .getByRole('switch')
        .getAttribute('aria-checked'),
    ).toBe('true');

    // 命中测试: a paraphrase of the FAQ's fact finds it first, with its score.
    await p.getByRole('tab', { name: '命中测试' }).click();
    await p.getByLabel('测试问题').fill('积分多久会过期');
    await p.getByLabel('召回条数').fill('10');
    await p.getByRole('button', { name: '测试', exact: true }).click();
    const results = p.getByRole('region', { name: '命中结果' });
    await expectVisible(results, 'the hit-test results');
    // No embeddings model is configured, so retrieval is full text.
    expect(await textOf(results.getByText(/命中 \d+ 个分段/))).toMatch(
      /^全文检索命中 [1-9]\d* 个分段，耗时 \d+ ms$/,
    );
    const hits = results.getByRole('listitem');
    const first = hits.first();
    expect(await textOf(first)).toContain('积分有效期为 24 个月');
    expect(await textOf(first)).toContain(FAQ_FILE);
    expect(await first.getByText('#1', { exact: true }).isVisible()).toBe(true);
    const scoreLabel = (await first.getByRole('progressbar').getAttribute('aria-label')) ?? '';
    expect(scoreLabel).toMatch(/^置信度 (0\.\d\d|1\.00)$/);
    const score = scoreLabel.replace('置信度 ', '');
    expect(Number(score)).toBeGreaterThan(0);
    expect(await first.getByText(score, { exact: true }).isVisible()).toBe(true);
    // Every later hit scores no higher; the enabled pair is searched, the disabled one is not.
    const scores = (
      await hits
        .getByRole('progressbar')
        .evaluateAll((bars) => bars.map((bar) => bar.getAttribute('aria-label') ?? ''))
    ).map((label) => Number(label.replace('置信度 ', '')));
    expect(scores.length).toBeGreaterThan(1);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    const allText = await hits.allTextContents();
    expect(allText.some((text) => text.includes(QA_PAIRS[1]![0]))).toBe(true);
    expect(allText.some((text) => text.includes(disabledQuestion))).toBe(false);
  });
});
