import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { expectVisible, openLoggedIn } from '../support/console';
import { submitSignatureInConsole, submitTemplateInConsole } from '../support/sms';

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
});
