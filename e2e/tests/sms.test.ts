import fs from 'node:fs';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { chooseOption, expectVisible, openLoggedIn, textOf } from '../support/console';
import { smsRowOf, submitSignatureInConsole, submitTemplateInConsole } from '../support/sms';

/*
 * 短信管理 end to end: an owner creates a signature, uploads its proof and submits it; writes a
 * 推广 template, is told by the linter it lacks the opt-out text, fixes it and submits it. Both
 * wait in 审核中 for the platform's reviewer (the admin CLI, which needs the server stopped when
 * the database is embedded: sms-follow-up.test.ts runs that part on a server of its own).
 */
const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

describe('短信管理', () => {
  it('submits a signature with its proof and a 推广 template the linter has passed', async () => {
    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;
    // Unique per run: names are unique within a project and the e2e database may be reused.
    const signature = `示例${String(Date.now()).slice(-8)}`;

    await p.getByRole('link', { name: '短信管理', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/sms/signature');
    await expectVisible(p.getByRole('heading', { name: '短信管理', exact: true }), 'the section heading');
    await submitSignatureInConsole(p, signature);
    // 推广 without the opt-out text is refused, with it passes.
    await submitTemplateInConsole(p, {
      name: `会员日活动-${Date.now()}`,
      type: '推广',
      rejected: '会员日全场8折，欢迎到店选购。',
      complaint: /错误：请在内容最后加上“拒收请回复R”/,
      fixed: '会员日全场8折，欢迎到店选购。拒收请回复R',
    });
    expect(p.url()).toContain('/sms/template');
  });

  it('sends a batch from a CSV: the preview counts a bad number, the rejected row downloads, the rest is delivered', async () => {
    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;
    const stem = `137${String(Date.now()).slice(-6)}`;
    const good = [`${stem}01`, `${stem}02`];
    const csv = `手机号,备注\n${good[0]},甲\n${stem}0,号码少一位\n${good[1]},乙\n`;

    await p.goto('/sms/send?mode=batch');
    // The demo project's signature and template are approved (the platform reviewed them).
    await chooseOption(p, p.getByLabel('批量发送签名'), '【星河宽带】');
    await chooseOption(p, p.getByLabel('批量发送模板'), '回访感谢');
    await p
      .locator('.ant-upload input[type=file]')
      .setInputFiles({ name: '回访名单.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    const confirm = p.getByRole('button', { name: /确认发送 2 条/ });
    await expectVisible(confirm, 'the preview with two sendable rows', 30_000);
    await expectVisible(
      p
        .getByRole('region', { name: '短信示例' })
        .getByText(/【星河宽带】感谢您接听星河宽带回访/)
        .first(),
      'a sample text',
    );
    await confirm.click();
    await expectVisible(p.getByText('已提交：2 条进入发送队列，1 行未通过'), 'the result', 30_000);

    const [download] = await Promise.all([
      p.waitForEvent('download'),
      p.getByRole('button', { name: '下载未通过行' }).first().click(),
    ]);
    const rejects = fs.readFileSync((await download.path()) ?? '', 'utf8');
    expect(rejects).toContain(`${stem}0`);
    expect(rejects).toContain('手机号');

    const batchRow = smsRowOf(p, '回访名单.csv');
    await expect
      .poll(async () => textOf(batchRow.first()), { timeout: 60_000, interval: 1000 })
      .toContain('成功 2');
  });
});
