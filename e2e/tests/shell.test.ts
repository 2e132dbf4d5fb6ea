import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await context?.close();
});

async function openLoggedIn(): Promise<Page> {
  context = await browser.newContext({
    baseURL: baseUrl,
    locale: 'zh-CN',
    viewport: { width: 1280, height: 800 },
  });
  const p = await context.newPage();
  await p.goto('/login');
  await p.getByLabel('邮箱/手机号', { exact: true }).fill(inject('demoEmail'));
  await p.getByLabel('密码', { exact: true }).fill(inject('demoPassword'));
  await p.getByRole('button', { name: '登录', exact: true }).click();
  await p.waitForURL((url) => url.pathname === '/dashboard');
  return p;
}

describe('the console shell', () => {
  it('navigates from the sidebar and marks the current section', async () => {
    const p = await openLoggedIn();
    await p.getByRole('link', { name: '数据统计' }).click();
    await p.waitForURL((url) => url.pathname === '/data-report/callin');
    await expect.poll(() => p.getByRole('heading', { name: '数据统计' }).isVisible()).toBe(true);
    expect(await p.getByRole('link', { name: '数据统计' }).getAttribute('aria-current')).toBe('page');
  });

  it('keeps the sidebar collapsed across a reload', async () => {
    const p = await openLoggedIn();
    await p.getByRole('button', { name: '折叠导航' }).click();
    await expect.poll(() => p.getByRole('button', { name: '展开导航' }).isVisible()).toBe(true);
    expect(await p.evaluate(() => localStorage.getItem('sidebar-collapsed'))).toBe('true');
    await p.reload();
    await expect
      .poll(() => p.getByRole('button', { name: '展开导航' }).isVisible(), { timeout: 10_000 })
      .toBe(true);
    const width = await p.locator('aside').evaluate((el) => el.getBoundingClientRect().width);
    expect(width).toBeLessThanOrEqual(64);
  });

  it('logs out from the user menu', async () => {
    const p = await openLoggedIn();
    await p.getByRole('button', { name: /用户菜单/ }).click();
    await p.getByRole('menuitem', { name: '退出登录' }).click();
    await p.waitForURL((url) => url.pathname === '/login');
    expect(await p.evaluate(() => localStorage.getItem('token'))).toBeNull();
  });
});
