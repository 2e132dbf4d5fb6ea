import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { takeCspViolations } from '../support/csp';

const baseUrl = inject('baseUrl');
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('security headers in the browser', () => {
  it('serve the console under a CSP that blocks an injected inline script', async () => {
    const page = await browser.newPage({ locale: 'zh-CN' });
    const response = await page.goto(`${baseUrl}/login`);
    const headers = response!.headers();
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['x-content-type-options']).toBe('nosniff');
    await page.getByRole('button', { name: '登录', exact: true }).waitFor({ timeout: 30_000 });
    expect(takeCspViolations()).toEqual([]);

    // What an XSS would do: a script element with inline code. The policy must stop it running.
    await page.evaluate(() => {
      const script = document.createElement('script');
      script.textContent = 'window.__injected = true';
      document.body.append(script);
    });
    const seen: string[] = [];
    await expect
      .poll(
        () => {
          seen.push(...takeCspViolations());
          return seen.join('\n');
        },
        { timeout: 5_000 },
      )
      .toMatch(/script-src/);
    expect(await page.evaluate(() => (window as { __injected?: boolean }).__injected)).toBeUndefined();
    await page.close();
    // Chromium reports the one refusal twice (the event and its console line): neither may fail the test.
    takeCspViolations();
  });

  it('let the API documentation at /docs render without violations', async () => {
    const page = await browser.newPage({ locale: 'zh-CN' });
    await page.goto(`${baseUrl}/docs`);
    await page.locator('.swagger-ui .info').first().waitFor({ timeout: 30_000 });
    await page.close();
  });
});
