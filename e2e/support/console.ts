import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';

/** A fresh browser context (own localStorage and token) logged in through the /login page. */
export async function openLoggedIn(
  browser: Browser,
  baseUrl: string,
  email: string,
  password: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    locale: 'zh-CN',
    viewport: { width: 1440, height: 900 },
  });
  const page = await context.newPage();
  await page.goto('/login');
  // Exact names: the login page's tabs (密码登录, 验证码登录) contain them too.
  await page.getByLabel('邮箱/手机号', { exact: true }).fill(email);
  await page.getByLabel('密码', { exact: true }).fill(password);
  await page.getByRole('button', { name: '登录', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/dashboard');
  return { context, page };
}

/** Waits until the locator is on screen, failing with `what` after `timeout` ms. */
export async function expectVisible(locator: Locator, what: string, timeout = 10_000) {
  await expect.poll(() => locator.isVisible(), { timeout, message: `${what} should be visible` }).toBe(true);
}

/** The visible text of an element, with runs of white space collapsed. */
export async function textOf(locator: Locator): Promise<string> {
  return ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
}

/**
 * Picks an option of an antd Select, whose dropdown is rendered at the end of the body: by its
 * exact title for a string, by its text for a pattern.
 */
export async function chooseOption(p: Page, select: Locator, option: string | RegExp) {
  await select.click();
  const item =
    typeof option === 'string'
      ? p.locator(`.ant-select-dropdown .ant-select-item-option[title="${option}"]`).filter({ visible: true })
      : p
          .locator('.ant-select-dropdown .ant-select-item-option')
          .filter({ visible: true })
          .filter({ hasText: option });
  await expectVisible(item.first(), `the option ${option}`);
  await item.first().click();
}

/**
 * Toasts land over the page header's buttons and stay while the pointer rests on them (sonner
 * pauses them under the mouse): move the pointer away and wait until they have left on their own.
 */
export async function waitForToastsToLeave(p: Page, timeout = 15_000) {
  await p.mouse.move(300, 800);
  await expect
    .poll(() => p.locator('[data-sonner-toast]').count(), { timeout, message: 'the toasts should leave' })
    .toBe(0);
}
