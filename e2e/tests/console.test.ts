import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});
const open = async () => {
  context = await browser.newContext({ baseURL: baseUrl, locale: 'zh-CN' });
  page = await context.newPage();
  return page;
};
afterEach(async () => {
  await context?.close();
});

// Exact names: the login page's tabs (密码登录, 验证码登录) and a third-party button (使用…登录) contain them too.
async function logIn(p: Page, password = inject('demoPassword')) {
  await p.getByLabel('邮箱/手机号', { exact: true }).fill(inject('demoEmail'));
  await p.getByLabel('密码', { exact: true }).fill(password);
  await p.getByRole('button', { name: '登录', exact: true }).click();
}

describe('the console served by npm start', () => {
  it('sends a visitor without a session to the login page, then back where they were', async () => {
    const p = await open();
    await p.goto('/');
    // The 401 flow waits a second before redirecting, so the user can read why.
    await p.waitForURL((url) => url.pathname === '/login', { timeout: 15_000 });
    expect(new URL(p.url()).searchParams.get('redirect')).toBe('/dashboard');

    await logIn(p);
    await p.waitForURL((url) => url.pathname === '/dashboard');
    await expect.poll(() => p.getByText('欢迎，演示用户').isVisible()).toBe(true);
    await expect.poll(() => p.getByText('演示项目').first().isVisible()).toBe(true);
    expect(await p.evaluate(() => localStorage.getItem('token'))).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('shows the server message for a wrong password and stays on /login', async () => {
    const p = await open();
    await p.goto('/login');
    await logIn(p, 'not-the-password');
    await expect.poll(() => p.getByText('账号或密码错误').isVisible(), { timeout: 10_000 }).toBe(true);
    expect(new URL(p.url()).pathname).toBe('/login');
    expect(await p.evaluate(() => localStorage.getItem('token'))).toBeNull();
  });

  it('serves deep links from the server and sends unknown paths home', async () => {
    const p = await open();
    await p.goto('/login');
    await logIn(p);
    await p.waitForURL((url) => url.pathname === '/dashboard');
    const res = await p.goto('/no/such/page?x=1');
    expect(res?.status()).toBe(200);
    await p.waitForURL((url) => url.pathname === '/dashboard');
    await expect.poll(() => p.getByRole('heading', { name: '首页' }).isVisible()).toBe(true);
  });

  it('loads hashed assets with a long-lived cache and the API docs at /docs', async () => {
    const p = await open();
    const assets: { url: string; cache: string | undefined }[] = [];
    p.on('response', (r) => {
      if (new URL(r.url()).pathname.startsWith('/assets/'))
        assets.push({ url: r.url(), cache: r.headers()['cache-control'] });
    });
    await p.goto('/login');
    await p.getByRole('button', { name: '登录', exact: true }).waitFor();
    expect(assets.length).toBeGreaterThan(0);
    for (const a of assets) expect(a.cache, a.url).toContain('immutable');

    // The open API's document is the default; the console's is one choice away in the selector.
    await p.goto('/docs');
    await expect
      .poll(() => p.getByText('/opendock/v1/me').first().isVisible(), { timeout: 15_000 })
      .toBe(true);
    await p.locator('.topbar select').selectOption({ label: '控制台 API' });
    await expect.poll(() => p.getByText('/auth/login').first().isVisible(), { timeout: 15_000 }).toBe(true);
  });
});
