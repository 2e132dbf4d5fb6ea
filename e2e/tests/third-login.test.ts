import fs from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { type RunningOidcProvider, startOidcProvider } from '../support/oidc-provider';
import { freePort, type RunningServer, startServer, stopServer, tempDir } from '../support/server';

const PROVIDER_NAME = '企业账号';

let provider: RunningOidcProvider;
let server: RunningServer;
let dataDir: string;
let browser: Browser;
let context: BrowserContext | undefined;

beforeAll(async () => {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  provider = await startOidcProvider({
    redirectUris: [`${publicUrl}/third-login`],
    accounts: [
      { sub: 'li-lei', email: 'li.lei@example.com', email_verified: true, name: '李雷' },
      { sub: 'han-meimei', email: 'han@example.com', email_verified: false, name: '韩梅梅' },
    ],
  });
  dataDir = tempDir('e2e-oidc');
  server = await startServer({
    PORT: String(port),
    PUBLIC_URL: publicUrl,
    OIDC_ISSUER: provider.issuer,
    OIDC_CLIENT_ID: provider.clientId,
    OIDC_CLIENT_SECRET: provider.clientSecret,
    OIDC_NAME: PROVIDER_NAME,
    DATA_DIR: dataDir,
    DEMO: 'off',
  });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  if (server) await stopServer(server);
  await provider?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

async function open(): Promise<Page> {
  context = await browser.newContext({ baseURL: server.url, locale: 'zh-CN' });
  return context.newPage();
}

/** From the console's login page through the provider's development login and consent pages. */
async function signInAtProvider(p: Page, login: string, redirect?: string) {
  await p.goto(redirect ? `/login?redirect=${encodeURIComponent(redirect)}` : '/login');
  await p.getByRole('button', { name: `使用${PROVIDER_NAME}登录` }).click();
  await p.waitForURL((url) => url.origin === provider.issuer && url.pathname.startsWith('/interaction/'));
  await p.locator('input[name="login"]').fill(login);
  await p.locator('input[name="password"]').fill('any-password');
  await p.getByRole('button', { name: 'Sign-in' }).click();
  // Consent is asked once per session and client.
  await p.getByRole('button', { name: 'Continue' }).click();
}

describe('third-party login against a local OpenID provider', () => {
  it('logs in at the provider and lands in the console with a working session', async () => {
    const p = await open();
    await signInAtProvider(p, 'li-lei', '/account-info');
    await p.waitForURL((url) => url.origin === server.url && url.pathname === '/third-login');
    // The page completes the login by itself and goes where the visitor was headed before /login.
    await p.waitForURL((url) => url.pathname === '/account-info', { timeout: 15_000 });

    const token = await p.evaluate(() => localStorage.getItem('token'));
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const me = await fetch(`${server.url}/api/user/current`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const body = (await me.json()) as { data: { email: string; displayName: string } };
    expect(body.data).toMatchObject({ email: 'li.lei@example.com', displayName: '李雷' });
  });

  it('shows why a provider account without a verified e-mail cannot log in, with the way back', async () => {
    const p = await open();
    await signInAtProvider(p, 'han-meimei');
    await p.waitForURL((url) => url.origin === server.url && url.pathname === '/third-login');
    await expect
      .poll(() => p.getByText('第三方账号未提供已验证的邮箱，无法登录').isVisible(), { timeout: 15_000 })
      .toBe(true);
    expect(await p.evaluate(() => localStorage.getItem('token'))).toBeNull();
    await p.getByText('返回登录').click();
    await p.waitForURL((url) => url.pathname === '/login');
  });
});
