import zlib from 'node:zlib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';

/** What a first visit of /login may download, JS and CSS after gzip (bench bundle prints the ratio). */
const LOGIN_BUDGET_BYTES = 200 * 1024;

const baseUrl = inject('baseUrl');
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('/login weight', () => {
  it('loads at most 200 KB of gzip JS and CSS on a first visit, and still logs in', async () => {
    // A fresh context: empty cache, so every file the page needs is fetched and counted.
    const context = await browser.newContext({ baseURL: baseUrl, locale: 'zh-CN' });
    try {
      const page = await context.newPage();
      const bodies = new Map<string, Promise<Buffer>>();
      page.on('response', (res) => {
        const type = res.request().resourceType();
        if (res.status() >= 300 || (type !== 'script' && type !== 'stylesheet') || bodies.has(res.url()))
          return;
        const body = res.body();
        body.catch(() => {});
        bodies.set(res.url(), body);
      });
      // networkidle: the route's lazy chunks and whatever the page fetches after its first render.
      await page.goto('/login', { waitUntil: 'networkidle' });
      await page.getByLabel('邮箱/手机号', { exact: true }).waitFor();

      const files: { path: string; gzip: number }[] = [];
      for (const [url, body] of bodies) {
        // gzip -9 of each file stands in for the transfer, whatever the server's compression.
        files.push({ path: new URL(url).pathname, gzip: zlib.gzipSync(await body, { level: 9 }).length });
      }
      const total = files.reduce((sum, f) => sum + f.gzip, 0);
      const listing = files
        .sort((a, b) => b.gzip - a.gzip)
        .map((f) => `${(f.gzip / 1024).toFixed(1).padStart(7)} KB ${f.path}`)
        .join('\n');
      console.log(`/login: ${files.length} files, ${(total / 1024).toFixed(1)} KB gzip JS+CSS`);
      expect(files.length, 'no JS or CSS was counted').toBeGreaterThan(0);
      expect(total, `/login loads ${(total / 1024).toFixed(1)} KB:\n${listing}`).toBeLessThanOrEqual(
        LOGIN_BUDGET_BYTES,
      );

      // The light page is still the login page: it validates and signs in.
      await page.getByRole('button', { name: '登录', exact: true }).click();
      await page.getByText('请输入邮箱或手机号').waitFor();
      await page.getByLabel('邮箱/手机号', { exact: true }).fill(inject('demoEmail'));
      await page.getByLabel('密码', { exact: true }).fill(inject('demoPassword'));
      await page.getByRole('button', { name: '登录', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/dashboard');
    } finally {
      await context.close();
    }
  });
});
