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

/** Logs in through the /login page of `origin` (the token is kept per origin) and waits for the dashboard. */
async function logIn(p: Page, origin: string, email: string, password: string) {
  await p.goto(`${origin}/login`);
  // Exact names: the login page's tabs (密码登录, 验证码登录) contain them too.
  await p.getByLabel('邮箱/手机号', { exact: true }).fill(email);
  await p.getByLabel('密码', { exact: true }).fill(password);
  await p.getByRole('button', { name: '登录', exact: true }).click();
  await p.waitForURL((url) => url.origin === origin && url.pathname === '/dashboard');
}

async function openLoggedIn(
  email: string = inject('demoEmail'),
  password: string = inject('demoPassword'),
): Promise<Page> {
  context = await browser.newContext({
    baseURL: baseUrl,
    locale: 'zh-CN',
    viewport: { width: 1280, height: 800 },
  });
  const p = await context.newPage();
  await logIn(p, baseUrl, email, password);
  return p;
}

const asideWidth = (p: Page) => p.locator('aside').evaluate((el) => el.getBoundingClientRect().width);
const storedJson = (p: Page, key: string) =>
  p.evaluate((k) => {
    const raw = localStorage.getItem(k);
    return raw === null ? null : (JSON.parse(raw) as unknown);
  }, key);

/** Drags the sidebar's resize handle with the mouse so that it ends at `percent` of the window width. */
async function dragSidebarTo(p: Page, percent: number) {
  const handle = p.getByRole('separator');
  const box = await handle.boundingBox();
  if (!box) throw new Error('the sidebar resize handle is not on screen');
  const y = box.y + box.height / 2;
  const viewportWidth = p.viewportSize()?.width ?? 1280;
  await p.mouse.move(box.x + box.width / 2, y);
  await p.mouse.down();
  await p.mouse.move((viewportWidth * percent) / 100, y, { steps: 12 });
  await p.mouse.up();
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

  it('keeps a dragged sidebar width across a reload, and collapses it when dragged below 13%', async () => {
    const p = await openLoggedIn();
    const before = await asideWidth(p);
    // 18% of 1280 px, well clear of the default 15% (192 px) and under the 240 px cap.
    await dragSidebarTo(p, 18);
    await expect.poll(() => storedJson(p, 'sidebar-size')).toBeCloseTo(18, 0);
    const size = await storedJson(p, 'sidebar-size');
    expect(typeof size).toBe('number');
    const dragged = await asideWidth(p);
    expect(dragged).toBeGreaterThan(before + 25);
    expect(await storedJson(p, 'sidebar-collapsed')).not.toBe(true);
    expect(await p.getByRole('button', { name: '折叠导航' }).isVisible()).toBe(true);

    await p.reload();
    await expect
      .poll(() => p.getByRole('button', { name: '折叠导航' }).isVisible(), { timeout: 10_000 })
      .toBe(true);
    await expect.poll(async () => Math.abs((await asideWidth(p)) - dragged)).toBeLessThanOrEqual(2);
    expect(await storedJson(p, 'sidebar-size')).toBe(size);

    // Below the 13% threshold counts as collapsed: the toggle offers to expand, and that is stored.
    await dragSidebarTo(p, 8);
    await expect.poll(() => p.getByRole('button', { name: '展开导航' }).isVisible()).toBe(true);
    expect(await p.evaluate(() => localStorage.getItem('sidebar-collapsed'))).toBe('true');
    const collapsedSize = await storedJson(p, 'sidebar-size');
    expect(collapsedSize).toBeGreaterThanOrEqual(4);
    expect(collapsedSize).toBeLessThan(13);
    expect(await asideWidth(p)).toBeLessThanOrEqual(64);
    // Collapsed, the section links keep their names but show no text.
    expect(await p.getByRole('link', { name: '数据统计' }).textContent()).toBe('');
  });

  it('tells a user without a project to contact sales, with the configured phone', async () => {
    const email = `no-project-${Date.now()}@example.com`;
    const password = 'no-project-1';
    const res = await fetch(`${baseUrl}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password, displayName: '无项目用户' }),
    });
    expect(res.status, await res.clone().text()).toBe(200);

    const p = await openLoggedIn(email, password);
    const dialog = p.getByRole('dialog', { name: '提示' });
    await expect.poll(() => dialog.isVisible(), { timeout: 10_000 }).toBe(true);
    const text = `您的项目尚未开通，请联系销售开通，销售电话：${inject('salesPhone')}`;
    await expect.poll(() => dialog.getByText(text, { exact: true }).isVisible()).toBe(true);

    await dialog.getByRole('button', { name: '确定' }).click();
    await expect.poll(() => p.getByRole('dialog').count()).toBe(0);
    expect(new URL(p.url()).pathname).toBe('/dashboard');
    // Without a project nothing is disabled, so the other sections stay reachable.
    await p.getByRole('link', { name: '数据统计' }).click();
    await p.waitForURL((url) => url.pathname === '/data-report/callin');
    await expect.poll(() => p.getByRole('heading', { name: '数据统计' }).isVisible()).toBe(true);
  });

  it('keeps the owner of a disabled project on the dashboard', async () => {
    const p = await openLoggedIn(inject('disabledEmail'), inject('disabledPassword'));
    const dialog = p.getByRole('dialog', { name: '提示' });
    await expect.poll(() => dialog.isVisible(), { timeout: 10_000 }).toBe(true);
    const text = `您的项目尚未开通，请联系销售开通，销售电话：${inject('salesPhone')}`;
    await expect.poll(() => dialog.getByText(text, { exact: true }).isVisible()).toBe(true);
    await dialog.getByRole('button', { name: '确定' }).click();
    await expect.poll(() => p.getByRole('dialog').count()).toBe(0);

    // From the sidebar: the router goes to /call-task/list, the guard sends it straight back.
    const visited: string[] = [];
    p.on('framenavigated', (frame) => {
      if (frame === p.mainFrame()) visited.push(new URL(frame.url()).pathname);
    });
    await p.getByRole('link', { name: '呼出任务' }).click();
    await expect.poll(() => visited).toContain('/call-task/list');
    await expect.poll(() => new URL(p.url()).pathname).toBe('/dashboard');
    expect(await p.getByRole('link', { name: '首页' }).getAttribute('aria-current')).toBe('page');
    expect(await p.getByRole('heading', { name: '呼出任务' }).count()).toBe(0);

    // Typed into the address bar: the same.
    await p.goto('/call-task/list');
    await p.waitForURL((url) => url.pathname === '/dashboard', { timeout: 10_000 });
    await expect
      .poll(() => p.getByRole('dialog', { name: '提示' }).isVisible(), { timeout: 10_000 })
      .toBe(true);
    expect(await p.getByRole('heading', { name: '呼出任务' }).count()).toBe(0);
  });

  it('shows the partner name and logo on a white-labelled host, and the default elsewhere', async () => {
    context = await browser.newContext({ locale: 'zh-CN', viewport: { width: 1280, height: 800 } });
    const p = await context.newPage();
    const oemUrl = inject('oemBaseUrl');
    const oemName = inject('oemName');

    await logIn(p, oemUrl, inject('demoEmail'), inject('demoPassword'));
    const partnerLink = p.getByRole('link', { name: oemName, exact: true });
    await expect.poll(() => partnerLink.isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await partnerLink.getAttribute('href')).toBe('/dashboard');
    expect(await partnerLink.textContent()).toBe(oemName);
    const logo = partnerLink.getByRole('img', { name: oemName });
    expect(await logo.getAttribute('src')).toBe(inject('oemLogo'));
    await expect
      .poll(() => logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
      .toBe(32);
    expect(await p.getByRole('link', { name: '智能语音外呼平台' }).count()).toBe(0);
    const oemStore = (await storedJson(p, 'oem-store')) as { state: { isOem: boolean; replaceName: string } };
    expect(oemStore.state).toMatchObject({ isOem: true, replaceName: oemName });

    // Same server, same browser, the usual host: its own token, and the product's own name.
    await logIn(p, baseUrl, inject('demoEmail'), inject('demoPassword'));
    const defaultLink = p.getByRole('link', { name: '智能语音外呼平台', exact: true });
    await expect.poll(() => defaultLink.isVisible(), { timeout: 10_000 }).toBe(true);
    expect(await defaultLink.textContent()).toBe('智能语音外呼平台');
    expect(await defaultLink.locator('img').count()).toBe(0);
    expect(await p.getByRole('link', { name: oemName }).count()).toBe(0);
    await expect
      .poll(
        async () =>
          ((await storedJson(p, 'oem-store')) as { state?: { isOem?: boolean } } | null)?.state?.isOem,
      )
      .toBe(false);
  });

  it("offers a refresh when a section's code fails to load, and the refresh brings the section", async () => {
    const p = await openLoggedIn();
    let aborted = 0;
    const smsChunk = '**/assets/sms-section-*.js';
    await p.route(smsChunk, (route) => {
      aborted += 1;
      return route.abort('connectionreset');
    });

    await p.getByRole('link', { name: '短信管理' }).click();
    const heading = p.getByRole('heading', { name: '页面已更新，新功能已上线' });
    await expect.poll(() => heading.isVisible(), { timeout: 10_000 }).toBe(true);
    expect(aborted).toBeGreaterThan(0);
    expect(await p.getByText('请刷新页面以获取最新功能和优化', { exact: true }).isVisible()).toBe(true);
    const refresh = p.getByRole('button', { name: '立即刷新', exact: true });
    expect(await refresh.isVisible()).toBe(true);
    // Not the generic error view.
    expect(await p.getByRole('heading', { name: '出错了' }).count()).toBe(0);

    await p.unroute(smsChunk);
    await p.evaluate(() => {
      (window as unknown as { beforeRefresh?: boolean }).beforeRefresh = true;
    });
    await Promise.all([p.waitForEvent('load'), refresh.click()]);
    expect(
      await p.evaluate(() => (window as unknown as { beforeRefresh?: boolean }).beforeRefresh),
    ).toBeUndefined();
    expect(new URL(p.url()).pathname).toMatch(/^\/sms/);
    await expect
      .poll(() => p.getByRole('heading', { name: '短信管理' }).isVisible(), { timeout: 10_000 })
      .toBe(true);
    expect(await p.getByRole('link', { name: '短信管理' }).getAttribute('aria-current')).toBe('page');
    expect(await heading.count()).toBe(0);
  });
});
