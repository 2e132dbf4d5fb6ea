import fs from 'node:fs';
import zlib from 'node:zlib';
import type { Browser, Response } from 'playwright-core';
// One way to start Chromium on this network-less machine, shared with the e2e suite.
import { chromiumPath as CHROMIUM, launchBrowser } from '../../e2e/support/browser';
import { withScope } from './lib/proc';
import { type BudgetResult, budget, fmtInt, fmtKiB, fmtPct, fmtRatio, table } from './lib/report';
import { login, startServer } from './lib/server';

const LOGIN_BUDGET_BYTES = 300 * 1024;
const TOKEN_STORAGE_KEY = 'token';

interface LoadedFile {
  url: string;
  raw: number;
  gzip: number;
}

interface PageWeight {
  path: string;
  files: LoadedFile[];
  raw: number;
  gzip: number;
  pageErrors: string[];
}

const isAsset = (res: Response) => {
  const type = res.request().resourceType();
  const contentType = res.headers()['content-type'] ?? '';
  return type === 'script' || type === 'stylesheet' || /javascript|ecmascript|text\/css/i.test(contentType);
};

/**
 * Loads one page in a fresh context (empty cache, so every file is fetched) and weighs the JS and
 * CSS it pulled in, including chunks the router loads lazily. Bodies are the decoded files;
 * gzip -9 of each stands in for the transfer size independently of the server's compression setup.
 */
async function weighPage(
  browser: Browser,
  baseUrl: string,
  path: string,
  token?: string,
): Promise<PageWeight> {
  const context = await browser.newContext(
    token
      ? {
          // Set before the first navigation, so the console starts logged in without visiting /login.
          storageState: {
            cookies: [],
            origins: [{ origin: baseUrl, localStorage: [{ name: TOKEN_STORAGE_KEY, value: token }] }],
          },
        }
      : {},
  );
  try {
    const page = await context.newPage();
    const bodies = new Map<string, Promise<Buffer>>();
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('response', (res) => {
      if (res.status() >= 300 || !isAsset(res) || bodies.has(res.url())) return;
      // Fetch the body right away: it is gone once the context closes.
      const body = res.body();
      body.catch(() => {});
      bodies.set(res.url(), body);
    });
    // networkidle waits for the route's lazy chunks and anything the page loads after its first API calls.
    await page.goto(`${baseUrl}${path}`, { waitUntil: 'networkidle', timeout: 60_000 });
    const landed = new URL(page.url()).pathname;
    if (landed !== path) {
      throw new Error(`${path} ended on ${landed}; the measurement would weigh the wrong page`);
    }
    const files: LoadedFile[] = [];
    for (const [url, body] of bodies) {
      const buf = await body;
      files.push({ url, raw: buf.length, gzip: zlib.gzipSync(buf, { level: 9 }).length });
    }
    files.sort((a, b) => b.gzip - a.gzip);
    return {
      path,
      files,
      raw: files.reduce((s, f) => s + f.raw, 0),
      gzip: files.reduce((s, f) => s + f.gzip, 0),
      pageErrors,
    };
  } finally {
    await context.close();
  }
}

export async function bundleBenchmark(): Promise<BudgetResult[]> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
  }
  const [loginPage, dashboard] = await withScope(async (scope) => {
    const server = await startServer(scope);
    const token = await login(server.baseUrl);
    const browser = await launchBrowser();
    scope.defer(() => browser.close());
    const loginPage = await weighPage(browser, server.baseUrl, '/login');
    const dashboard = await weighPage(browser, server.baseUrl, '/dashboard', token);
    return [loginPage, dashboard] as const;
  });

  for (const p of [loginPage, dashboard]) {
    console.log(`  ${p.path}: ${p.files.length} files, ${fmtKiB(p.raw)} raw, ${fmtKiB(p.gzip)} gzip -9`);
    console.log(
      table(
        ['file', 'raw B', 'gzip B'],
        p.files.map((f) => [new URL(f.url).pathname, fmtInt(f.raw), fmtInt(f.gzip)]),
      ),
    );
    // An error can cut a page short and make it look lighter than it is.
    for (const e of p.pageErrors) console.log(`  warning: page error on ${p.path}: ${e}`);
  }
  console.log(
    table(
      ['page', 'files', 'raw B', 'gzip B', 'vs budget', 'vs /login'],
      [loginPage, dashboard].map((p) => [
        p.path,
        String(p.files.length),
        fmtInt(p.raw),
        fmtInt(p.gzip),
        fmtPct(p.gzip / LOGIN_BUDGET_BYTES),
        fmtRatio(p.gzip / loginPage.gzip),
      ]),
    ),
  );

  return [
    budget(
      '/login JS+CSS gzip <= 300 KiB',
      loginPage.gzip <= LOGIN_BUDGET_BYTES,
      `${fmtKiB(loginPage.gzip)} = ${fmtPct(loginPage.gzip / LOGIN_BUDGET_BYTES)} of ${fmtKiB(LOGIN_BUDGET_BYTES)}; ` +
        `/dashboard is ${fmtRatio(dashboard.gzip / loginPage.gzip)} of /login`,
    ),
  ];
}
