import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { chooseOption, expectVisible, openLoggedIn, textOf } from '../support/console';

/*
 * 短信管理 end to end: an owner creates a signature, uploads its proof and submits it; writes a
 * 推广 template, is told by the linter it lacks the opt-out text, fixes it and submits it. Both
 * wait in 审核中 for the platform's reviewer (the admin CLI, which needs the server stopped when
 * the database is embedded: not here).
 */
const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;

// A 1×1 PNG: the server checks the file's own bytes, not its name.
const PROOF_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

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

const rowOf = (p: Page, text: string) => p.locator('.ant-table-tbody tr').filter({ hasText: text });

describe('短信管理', () => {
  it('submits a signature with its proof and a 推广 template the linter has passed', async () => {
    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;
    // Unique per run: names are unique within a project and the e2e database may be reused.
    const signature = `示例${String(Date.now()).slice(-8)}`;
    const template = `会员日活动-${Date.now()}`;

    await p.getByRole('link', { name: '短信管理', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/sms/signature');
    await expectVisible(p.getByRole('heading', { name: '短信管理', exact: true }), 'the section heading');

    // 签名: create, prove, submit.
    await p.getByRole('button', { name: '新建签名' }).first().click();
    const signatureDialog = p.getByRole('dialog').filter({ hasText: '新建签名' });
    await signatureDialog.getByLabel('签名名称').fill(signature);
    await signatureDialog.getByRole('button', { name: /^创\s*建$/ }).click();
    const signatureRow = rowOf(p, `【${signature}】`);
    await expectVisible(signatureRow, 'the new signature in the list');
    expect(await textOf(signatureRow)).toContain('待提交');

    await signatureRow.getByRole('button', { name: '上传证明' }).click();
    const proofDialog = p.getByRole('dialog').filter({ hasText: '上传资质证明' });
    await proofDialog
      .locator('input[type=file]')
      .setInputFiles({ name: '营业执照.png', mimeType: 'image/png', buffer: PROOF_PNG });
    await expectVisible(proofDialog.getByText('营业执照.png'), 'the chosen file name');
    await proofDialog.getByRole('button', { name: /^上\s*传$/ }).click();
    await expect.poll(() => textOf(signatureRow), { timeout: 10_000 }).toContain('营业执照.png');

    await signatureRow.getByRole('button', { name: '提交审核' }).click();
    await expect.poll(() => textOf(signatureRow), { timeout: 10_000 }).toContain('审核中');
    await expectVisible(signatureRow.getByRole('button', { name: '撤回' }), '撤回 while under review');

    // 模板: the linter refuses a 推广 text without the opt-out, then lets the fixed one through.
    await p.getByRole('link', { name: '模板管理', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/sms/template');
    await p.getByRole('button', { name: '新建模板' }).first().click();
    const editor = p.locator('.ant-drawer').filter({ hasText: '新建模板' });
    await expectVisible(editor, 'the template editor');
    await chooseOption(p, editor.getByLabel('模板类型'), '推广');
    await editor.getByRole('textbox', { name: '模板名称' }).fill(template);
    const content = editor.getByRole('textbox', { name: '模板内容' });
    await content.fill('会员日全场8折，欢迎到店选购。');
    const complaint = editor.getByRole('listitem', { name: /错误：请在内容最后加上“拒收请回复R”/ });
    await expectVisible(complaint, "the linter's complaint");
    await editor.getByRole('button', { name: /提交审核/ }).click();
    await expectVisible(editor.getByText(/修改后才能提交审核/).first(), 'the refusal to submit');

    await content.fill('会员日全场8折，欢迎到店选购。拒收请回复R');
    await expect.poll(() => complaint.count()).toBe(0);
    await editor.getByRole('button', { name: /提交审核/ }).click();
    const templateRow = rowOf(p, template);
    await expectVisible(templateRow, 'the submitted template in the list');
    await expect.poll(() => textOf(templateRow), { timeout: 10_000 }).toContain('审核中');
    expect(await textOf(templateRow)).toContain('推广');
  });
});
