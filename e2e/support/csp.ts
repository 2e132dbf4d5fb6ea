import type { Browser, BrowserContext } from 'playwright-core';

/**
 * Content-Security-Policy violations seen in any page of the run. The server's policy
 * (apps/server/src/plugins/security-headers.ts) must allow everything the console does, so a
 * blocked script, style, image, media or connection fails the test it happened in.
 */
const violations: string[] = [];

const MARK = '[csp-violation]';

async function watch(context: BrowserContext) {
  // The event carries the directive and the blocked address; Chromium's own console line about a
  // refused load is caught too, in case the page's script never ran.
  // A string, not a function: this file is also compiled without the DOM's types (bench).
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) => {
      console.error(${JSON.stringify(MARK)} + ' ' + e.effectiveDirective + ' blocked ' + (e.blockedURI || 'inline') +
        ' (' + e.sourceFile + ':' + e.lineNumber + ')');
    });`,
  });
  context.on('console', (message) => {
    const text = message.text();
    if (text.startsWith(MARK) || /Content Security Policy/i.test(text)) violations.push(text);
  });
}

/** Every context and page of the browser reports its CSP violations. */
export function watchCspViolations(browser: Browser): Browser {
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...args) => {
    const context = await newContext(...args);
    await watch(context);
    return context;
  };
  browser.newPage = async (...args) => {
    const context = await browser.newContext(...args);
    const page = await context.newPage();
    // As Browser.newPage does: the page owns its context.
    page.once('close', () => void context.close());
    return page;
  };
  return browser;
}

/** The violations so far, forgotten (a test that provokes one on purpose reads it here). */
export const takeCspViolations = () => violations.splice(0);

/** Fails the test in which a violation happened (e2e/support/setup.ts runs it after each test). */
export function assertNoCspViolations() {
  const seen = violations.splice(0);
  if (seen.length) throw new Error(`Content-Security-Policy violations:\n${seen.join('\n')}`);
}
