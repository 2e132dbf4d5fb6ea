import fs from 'node:fs';
import zlib from 'node:zlib';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
// One way to start Chromium on this network-less machine, shared with the e2e suite.
import { chromiumPath as CHROMIUM, launchBrowser } from '../../e2e/support/browser';
import { withScope } from './lib/proc';
import { type BudgetResult, budget, fmtInt, fmtKiB, fmtPct, fmtRatio, table } from './lib/report';
import { login, startServer } from './lib/server';

// Also asserted by e2e/tests/login-weight.test.ts.
const LOGIN_BUDGET_BYTES = 200 * 1024;
const DASHBOARD_BUDGET_BYTES = 450 * 1024;
const TOKEN_STORAGE_KEY = 'token';

/**
 * One path per shell section other than the dashboard, visited in this order after /dashboard by
 * in-app navigation. Each section is meant to be its own lazy chunk, so each must fetch JS that
 * no earlier page fetched; a section bundled into the shell or sharing a chunk with another shows
 * up as a row without new files.
 */
const SECTION_PATHS = [
  '/call-record/list',
  '/assistant/list',
  '/knowledge/x',
  '/sms/x',
  // A page of its own: other paths under /ivr redirect to it.
  '/ivr/numbers',
  '/data-report/callin',
  '/developer-options/x',
  '/call-task/list',
  '/account-info',
];

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
  /** Files that are React's development build: then the console was not built for production. */
  developmentFiles: string[];
}

// Printed by react-dom's development build only. Vite bundles it whenever NODE_ENV is not
// `production` during the build (a test runner sets NODE_ENV=test, for one), and such a dist
// stays on disk: scripts/build.mjs rebuilds only stale sources.
const REACT_DEVELOPMENT_MARKER = 'Download the React DevTools';

const isAsset = (res: Response) => {
  const type = res.request().resourceType();
  const contentType = res.headers()['content-type'] ?? '';
  return type === 'script' || type === 'stylesheet' || /javascript|ecmascript|text\/css/i.test(contentType);
};

/** A fresh context (empty cache, so every file is fetched), logged in when given a token. */
function newContext(browser: Browser, baseUrl: string, token?: string): Promise<BrowserContext> {
  return browser.newContext(
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
}

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
  const context = await newContext(browser, baseUrl, token);
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
    const developmentFiles: string[] = [];
    for (const [url, body] of bodies) {
      const buf = await body;
      files.push({ url, raw: buf.length, gzip: zlib.gzipSync(buf, { level: 9 }).length });
      if (buf.includes(REACT_DEVELOPMENT_MARKER)) developmentFiles.push(new URL(url).pathname);
    }
    files.sort((a, b) => b.gzip - a.gzip);
    return {
      path,
      files,
      raw: files.reduce((s, f) => s + f.raw, 0),
      gzip: files.reduce((s, f) => s + f.gzip, 0),
      pageErrors,
      developmentFiles,
    };
  } finally {
    await context.close();
  }
}

interface SectionLoad {
  path: string;
  landed: string;
  /** JS files this navigation fetched that no earlier page of the same visit had fetched. */
  newJs: LoadedFile[];
}

/** Live event streams stay open by design; they are not part of loading a page. */
const isEventStream = (request: { url(): string }) =>
  /\/events(\?|$)/.test(`${new URL(request.url()).pathname}?`);

/** Resolves once no request has been in flight for `quietMs` (lazy chunks, then their API calls). */
async function networkQuiet(page: Page, quietMs = 500, timeoutMs = 30_000): Promise<void> {
  let inflight = 0;
  let last = Date.now();
  const start = (request: { url(): string }) => {
    if (isEventStream(request)) return;
    inflight += 1;
    last = Date.now();
  };
  const end = (request: { url(): string }) => {
    if (isEventStream(request)) return;
    inflight = Math.max(0, inflight - 1);
    last = Date.now();
  };
  page.on('request', start);
  page.on('requestfinished', end);
  page.on('requestfailed', end);
  try {
    const deadline = Date.now() + timeoutMs;
    // Give the navigation a moment to start its first request.
    await page.waitForTimeout(50);
    while (inflight > 0 || Date.now() - last < quietMs) {
      if (Date.now() > deadline) throw new Error(`network not quiet after ${timeoutMs} ms on ${page.url()}`);
      await page.waitForTimeout(50);
    }
  } finally {
    page.off('request', start);
    page.off('requestfinished', end);
    page.off('requestfailed', end);
  }
}

/**
 * Opens /dashboard logged in, then moves to each section the way the sidebar does (a client-side
 * navigation, no reload), recording which JS files each step fetched for the first time.
 */
async function loadSections(browser: Browser, baseUrl: string, token: string) {
  const context = await newContext(browser, baseUrl, token);
  try {
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(err.message));
    const js = new Map<string, Promise<Buffer>>();
    page.on('response', (res) => {
      const url = new URL(res.url());
      if (res.status() >= 300 || !isAsset(res) || !url.pathname.endsWith('.js') || js.has(res.url())) return;
      const body = res.body();
      body.catch(() => {});
      js.set(res.url(), body);
    });
    await page.goto(`${baseUrl}/dashboard`, { waitUntil: 'networkidle', timeout: 60_000 });
    const loads: SectionLoad[] = [];
    for (const path of SECTION_PATHS) {
      const before = new Set(js.keys());
      const quiet = networkQuiet(page);
      // A client-side navigation, as a sidebar link makes (no reload): push the URL and let the data
      // router, which listens for popstate, load the route. A string: bench has no DOM typings.
      await page.evaluate(
        `history.pushState({}, '', ${JSON.stringify(path)}); dispatchEvent(new PopStateEvent('popstate', { state: {} }))`,
      );
      await quiet;
      const newJs: LoadedFile[] = [];
      for (const [url, body] of js) {
        if (before.has(url)) continue;
        const buf = await body;
        newJs.push({ url, raw: buf.length, gzip: zlib.gzipSync(buf, { level: 9 }).length });
      }
      loads.push({ path, landed: new URL(page.url()).pathname, newJs });
    }
    return { loads, pageErrors };
  } finally {
    await context.close();
  }
}

export async function bundleBenchmark(): Promise<BudgetResult[]> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
  }
  const [loginPage, dashboard, sections] = await withScope(async (scope) => {
    const server = await startServer(scope);
    const token = await login(server.baseUrl);
    const browser = await launchBrowser();
    scope.defer(() => browser.close());
    const loginPage = await weighPage(browser, server.baseUrl, '/login');
    const dashboard = await weighPage(browser, server.baseUrl, '/dashboard', token);
    const sections = await loadSections(browser, server.baseUrl, token);
    return [loginPage, dashboard, sections] as const;
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
      ['page', 'files', 'raw B', 'gzip B', 'budget B', 'vs budget', 'vs /login'],
      (
        [
          [loginPage, LOGIN_BUDGET_BYTES],
          [dashboard, DASHBOARD_BUDGET_BYTES],
        ] as const
      ).map(([p, limit]) => [
        p.path,
        String(p.files.length),
        fmtInt(p.raw),
        fmtInt(p.gzip),
        fmtInt(limit),
        fmtPct(p.gzip / limit),
        fmtRatio(p.gzip / loginPage.gzip),
      ]),
    ),
  );

  console.log('  sections after /dashboard, by in-app navigation: JS fetched for the first time');
  const sectionOk = (l: SectionLoad) => l.landed === l.path && l.newJs.length > 0;
  console.log(
    table(
      ['path', 'landed on', 'new JS files', 'raw B', 'gzip B', 'ok'],
      sections.loads.map((l) => [
        l.path,
        l.landed,
        String(l.newJs.length),
        fmtInt(l.newJs.reduce((sum, f) => sum + f.raw, 0)),
        fmtInt(l.newJs.reduce((sum, f) => sum + f.gzip, 0)),
        sectionOk(l) ? 'yes' : 'NO',
      ]),
    ),
  );
  for (const l of sections.loads) {
    const names = l.newJs.map((f) => new URL(f.url).pathname.replace(/^\/assets\//, ''));
    console.log(`  ${l.path}: ${names.join(' ') || '(none)'}`);
  }
  for (const e of sections.pageErrors) console.log(`  warning: page error while visiting sections: ${e}`);
  const without = sections.loads.filter((l) => !sectionOk(l));
  const developmentFiles = [...new Set([...loginPage.developmentFiles, ...dashboard.developmentFiles])];

  return [
    // The byte budgets mean nothing on a development bundle, so say so first.
    budget(
      'the console measured is a production build',
      developmentFiles.length === 0,
      developmentFiles.length === 0
        ? 'no React development build among the files loaded'
        : `React's development build in ${developmentFiles.join(', ')}; ` +
            'rebuild with NODE_ENV unset or production: node scripts/build.mjs --force',
    ),
    budget(
      '/login JS+CSS gzip <= 300 KiB',
      loginPage.gzip <= LOGIN_BUDGET_BYTES,
      `${fmtKiB(loginPage.gzip)} = ${fmtPct(loginPage.gzip / LOGIN_BUDGET_BYTES)} of ${fmtKiB(LOGIN_BUDGET_BYTES)}; ` +
        `/dashboard is ${fmtRatio(dashboard.gzip / loginPage.gzip)} of /login`,
    ),
    budget(
      '/dashboard JS+CSS gzip <= 450 KiB',
      dashboard.gzip <= DASHBOARD_BUDGET_BYTES,
      `${fmtKiB(dashboard.gzip)} = ${fmtPct(dashboard.gzip / DASHBOARD_BUDGET_BYTES)} of ${fmtKiB(DASHBOARD_BUDGET_BYTES)}`,
    ),
    budget(
      'every shell section is its own lazy chunk',
      without.length === 0,
      without.length === 0
        ? `${sections.loads.length} of ${sections.loads.length} sections fetched new JS when first opened`
        : `no new JS (or landed elsewhere) for ${without.map((l) => `${l.path} (on ${l.landed})`).join(', ')}`,
    ),
  ];
}
