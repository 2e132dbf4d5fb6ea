import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { repoRoot } from '../support/server';

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

const open = async (): Promise<Page> => {
  context = await browser.newContext({ baseURL: baseUrl, locale: 'zh-CN' });
  return context.newPage();
};

// Letters only in the unique part: the outbox parser below looks for the one 6-digit number.
const uniqueEmail = (name: string) =>
  `${name}-${Math.random()
    .toString(36)
    .replace(/[^a-z]/g, '')
    .slice(0, 10)}@example.com`;

async function register(email: string, password: string, displayName: string) {
  const res = await fetch(`${baseUrl}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, displayName }),
  });
  expect(res.ok, await res.clone().text()).toBe(true);
}

async function logIn(p: Page, account: string, password: string) {
  await p.getByLabel('邮箱/手机号', { exact: true }).fill(account);
  await p.getByLabel('密码', { exact: true }).fill(password);
  await p.getByRole('button', { name: '登录', exact: true }).click();
}

/** The newest code the development outbox holds for `to`, read with the operators' CLI. */
function latestCodeFor(to: string): string {
  const result = spawnSync(
    process.execPath,
    [path.join(repoRoot, 'apps/server/dist/admin.js'), 'outbox', '--to', to],
    {
      cwd: repoRoot,
      env: { ...process.env, DATA_DIR: inject('dataDir'), LOG_LEVEL: 'warn' },
      encoding: 'utf8',
      timeout: 30_000,
    },
  );
  expect(result.status, result.stderr).toBe(0);
  // Newest first; the first line of an entry is its header (time, channel, recipient, subject).
  const [newest = ''] = result.stdout.split('\n\n');
  const body = newest.split('\n').slice(1).join('\n');
  const code = body.match(/\b(\d{6})\b/)?.[1];
  expect(code, result.stdout).toBeDefined();
  return code!;
}

describe('identity in the browser', () => {
  it('signs up, registers a project and lands in the console', async () => {
    const p = await open();
    const email = uniqueEmail('signup');
    await p.goto('/signup');
    await p.getByLabel('邮箱', { exact: true }).fill(email);
    await p.getByLabel('昵称', { exact: true }).fill('端到端用户');
    await p.getByLabel('密码', { exact: true }).fill('e2e-pass-123');
    await p.getByLabel('确认密码', { exact: true }).fill('e2e-pass-123');
    await p.getByRole('button', { name: '下一步' }).click();

    await p.getByLabel('项目名称', { exact: true }).fill('端到端外呼项目');
    await p.getByLabel('公司名称', { exact: true }).fill('端到端科技有限公司');
    await p.getByLabel('所属行业', { exact: true }).click();
    await p.locator('.ant-select-item-option').filter({ hasText: '教育培训' }).click();
    await p.getByRole('button', { name: '完成并进入控制台' }).click();

    await p.waitForURL((url) => url.pathname === '/dashboard');
    await expect.poll(() => p.getByText('欢迎，端到端用户').isVisible(), { timeout: 10_000 }).toBe(true);
    await expect.poll(() => p.getByText('当前项目：端到端外呼项目').isVisible()).toBe(true);
  });

  it('logs in and returns to the page and query of the redirect parameter', async () => {
    const p = await open();
    await p.goto('/login?redirect=%2Faccount-info%3Ftab%3Dprofile');
    await logIn(p, inject('demoEmail'), inject('demoPassword'));

    await p.waitForURL((url) => url.pathname === '/account-info');
    expect(new URL(p.url()).search).toBe('?tab=profile');
    await expect.poll(() => p.getByRole('tab', { name: '基本资料', selected: true }).isVisible()).toBe(true);
    await expect
      .poll(() => p.getByLabel('昵称', { exact: true }).inputValue(), { timeout: 10_000 })
      .toBe('演示用户');
  });

  it('logs out: back to /login, and the old token no longer works', async () => {
    const p = await open();
    await p.goto('/login');
    await logIn(p, inject('demoEmail'), inject('demoPassword'));
    await p.waitForURL((url) => url.pathname === '/dashboard');
    const token = await p.evaluate(() => localStorage.getItem('token'));

    await p.getByRole('button', { name: /用户菜单/ }).click();
    await p.getByRole('menuitem', { name: '退出登录' }).click();
    await p.waitForURL((url) => url.pathname === '/login');
    expect(await p.evaluate(() => localStorage.getItem('token'))).toBeNull();
    const me = await fetch(`${baseUrl}/api/user/current`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(401);
  });

  it('resets a forgotten password with the code from the outbox, then logs in with it', async () => {
    const email = uniqueEmail('forgot');
    await register(email, 'old-pass-123', '忘记密码的人');
    const p = await open();
    await p.goto('/login');
    await p.getByRole('link', { name: '忘记密码' }).click();
    await p.waitForURL((url) => url.pathname === '/forget-password');

    await p.getByLabel('邮箱或手机号', { exact: true }).fill(email);
    await p.getByRole('button', { name: '发送验证码' }).click();
    await expect.poll(() => p.getByText(`验证码已发送至 ${email}`, { exact: false }).isVisible()).toBe(true);

    await p.getByLabel('验证码', { exact: true }).fill(latestCodeFor(email));
    await p.getByRole('button', { name: '下一步' }).click();
    await p.getByLabel('新密码', { exact: true }).fill('new-pass-456');
    await p.getByLabel('确认新密码', { exact: true }).fill('new-pass-456');
    await p.getByRole('button', { name: '重置密码' }).click();
    await expect.poll(() => p.getByText('密码已重置').isVisible(), { timeout: 10_000 }).toBe(true);

    await p.getByRole('button', { name: '返回登录' }).click();
    await p.waitForURL((url) => url.pathname === '/login');
    await logIn(p, email, 'new-pass-456');
    await p.waitForURL((url) => url.pathname === '/dashboard');
    await expect.poll(() => p.getByText('欢迎，忘记密码的人').isVisible(), { timeout: 10_000 }).toBe(true);
  });
});
