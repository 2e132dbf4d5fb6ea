import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { chooseOption, expectVisible, openLoggedIn, textOf, waitForToastsToLeave } from '../support/console';
import { login, type RunningServer, repoRoot, startServer, stopServer, tempDir } from '../support/server';
import { smsRowOf, submitSignatureInConsole, submitTemplateInConsole } from '../support/sms';

/*
 * 短信管理 from the first signature to a follow-up SMS a call triggered, as an operations team lives
 * it: the owner creates a signature and a template (fixing what the linter refuses first) and
 * submits them; the platform operator approves both with the admin CLI (the embedded database is
 * single-process, so on a server of its own, stopped meanwhile); the owner sets a follow-up rule on
 * an assistant, places a simulated call, and reads the SMS record it left, delivered.
 */
const dataDir = tempDir('e2e-sms');
const EMAIL = 'sms-ops@example.com';
const PASSWORD = 'sms-ops-pass-1';
const SIGNATURE = '星河宽带';
const TEMPLATE = '回访感谢短信';
const ASSISTANT = '宽带回访（短信）';
const serverEnv = {
  NODE_ENV: 'production',
  DATA_DIR: dataDir,
  DEMO: 'off',
  // The simulated carrier's clock runs 20× real time, so a 模拟通话 ends within seconds.
  SIM_TIME_SCALE: '20',
};

const admin = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(repoRoot, 'apps/server/dist/admin.js'), ...args], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    timeout: 60_000,
  });

let browser: Browser;
let server: RunningServer | undefined;
let context: BrowserContext | undefined;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await context?.close();
  await browser?.close();
  if (server) await stopServer(server);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function openConsole(): Promise<Page> {
  await context?.close();
  const opened = await openLoggedIn(browser, server!.url, EMAIL, PASSWORD);
  context = opened.context;
  return opened.page;
}

/** The project's API as its owner, for what the console is not under test for here. */
async function projectApi(url: string) {
  const headers = { authorization: `Bearer ${await login(url, EMAIL, PASSWORD)}` };
  const me = (await (await fetch(`${url}/api/user/current`, { headers })).json()) as {
    data: { projects: { id: string }[] };
  };
  const base = `${url}/api/project/${me.data.projects[0]?.id}`;
  return async <T>(method: string, route: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = (await res.json()) as { data: T; message: string };
    if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${answer.message}`);
    return answer.data;
  };
}

describe('短信跟进', () => {
  it('signature and template approved by the platform, a follow-up rule, a simulated call, its SMS delivered', {
    timeout: 420_000,
  }, async () => {
    const created = admin(
      'user:create',
      '--email',
      EMAIL,
      '--password',
      PASSWORD,
      '--project',
      '星河宽带客服',
    );
    expect(created.status, created.stderr).toBe(0);
    server = await startServer(serverEnv, { timeoutMs: 120_000 });
    const api = await projectApi(server.url);
    const assistant = await api<{ id: string }>('POST', '/assistants', {
      name: ASSISTANT,
      templateKey: 'customer-follow-up',
    });
    await api('POST', `/assistants/${assistant.id}/publish`, { note: '上线' });

    // 1. The owner prepares the signature and the template and submits both.
    let p = await openConsole();
    await p.getByRole('link', { name: '短信管理', exact: true }).click();
    await p.waitForURL((url) => url.pathname.startsWith('/sms/'));
    await submitSignatureInConsole(p, SIGNATURE);
    await submitTemplateInConsole(p, {
      name: TEMPLATE,
      type: '通知',
      // The product adds the signature: brackets in the text are refused.
      rejected: '【星河宽带】感谢您接听回访，如有疑问请致电4008006688。',
      complaint: /错误：.*【】/,
      fixed: '感谢您接听回访，宽带套餐与安装问题请致电4008006688。',
    });
    await context?.close();
    context = undefined;
    await stopServer(server);
    server = undefined;

    // 2. The platform operator approves both (the embedded database: the server is stopped).
    const waiting = admin('sms:review');
    expect(waiting.status, waiting.stderr).toBe(0);
    const idOf = (kind: 'signature' | 'template') => {
      const line = waiting.stdout.split('\n').find((l) => l.startsWith(`${kind}\t`));
      return line?.split('\t')[1] ?? '';
    };
    for (const kind of ['signature', 'template'] as const) {
      const decided = admin('sms:review', `--${kind}`, idOf(kind), '--approve');
      expect(decided.status, decided.stderr).toBe(0);
      expect(decided.stdout).toContain('approved');
    }
    server = await startServer(serverEnv, { timeoutMs: 120_000 });

    // 3. A follow-up rule on the assistant: after a call graded A–D, send the template.
    p = await openConsole();
    await p.getByRole('link', { name: '智能小助手', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/assistant/list');
    await p.getByRole('link', { name: ASSISTANT, exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/assistant/edit' && url.searchParams.has('id'));
    const card = p
      .locator('.ant-card')
      .filter({ has: p.locator('.ant-card-head-title', { hasText: '跟进短信' }) });
    await expectVisible(card, 'the 跟进短信 card');
    await card.getByRole('button', { name: '添加规则' }).click();
    const ruleDialog = p.getByRole('dialog').filter({ hasText: '添加跟进短信' });
    await expectVisible(ruleDialog, 'the rule dialog');
    for (const grade of ['A', 'B', 'C', 'D']) {
      const box = ruleDialog.getByRole('checkbox', { name: new RegExp(`^${grade}`) });
      if (!(await box.isChecked())) await box.check();
    }
    await chooseOption(p, ruleDialog.getByLabel('签名', { exact: true }), `【${SIGNATURE}】`);
    await chooseOption(p, ruleDialog.getByLabel('模板', { exact: true }), new RegExp(TEMPLATE));
    await expectVisible(
      ruleDialog.getByRole('region', { name: '短信预览' }).getByText(/感谢您接听回访/),
      'the preview of the text',
    );
    await ruleDialog.getByRole('button', { name: /^保\s*存$/ }).click();
    await expect.poll(() => ruleDialog.count()).toBe(0);
    expect(await textOf(card)).toContain(TEMPLATE);

    // 4. A simulated call to a customer who talks.
    const number = `139${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    await waitForToastsToLeave(p);
    const startDialog = p.getByRole('button', { name: '模拟通话', exact: true });
    await expect.poll(() => startDialog.isEnabled(), { timeout: 10_000 }).toBe(true);
    await startDialog.click();
    const callDialog = p.getByRole('dialog', { name: '模拟通话' });
    await chooseOption(p, callDialog.getByLabel('模拟客户', { exact: true }), '有意向的客户');
    await callDialog.getByLabel('被叫号码', { exact: true }).fill(number);
    await callDialog.getByRole('button', { name: '开始模拟', exact: true }).click();
    const status = callDialog.getByLabel('通话状态', { exact: true });
    await expect.poll(() => textOf(status), { timeout: 60_000 }).toMatch(/^已结束：/);
    await expectVisible(callDialog.getByRole('region', { name: '通话结果' }), 'the graded call', 30_000);
    await callDialog.getByRole('button', { name: '关闭', exact: true }).filter({ hasText: '关闭' }).click();

    // 5. The SMS record: sent to the callee, after the call, delivered (the development outbox).
    await p.getByRole('link', { name: '短信管理', exact: true }).click();
    await p.getByRole('link', { name: '发送记录', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/sms/record');
    const row = smsRowOf(p, number);
    await expect
      .poll(
        async () => {
          if (!(await row.count())) await p.reload();
          return textOf(row.first());
        },
        { timeout: 60_000, interval: 2000 },
      )
      .toContain('成功');
    const text = await textOf(row.first());
    expect(text).toContain(TEMPLATE);
    expect(text).toContain('跟进规则');
    // The time opens the record.
    await row.first().getByRole('button').first().click();
    const drawer = p.locator('.ant-drawer').filter({ hasText: '短信详情' });
    await expectVisible(drawer, 'the record drawer');
    const details = await textOf(drawer);
    expect(details).toContain(`【${SIGNATURE}】感谢您接听回访，宽带套餐与安装问题请致电4008006688。`);
    for (const step of ['已提交', '运营商已接收', '成功']) expect(details).toContain(step);
  });
});
