import fs from 'node:fs';
import path from 'node:path';
import type { Trunk } from '@callpilot/contracts';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { expectVisible, openLoggedIn, textOf } from '../support/console';
import { openProjectApi, type ProjectApi } from '../support/project-api';
import { tempDir } from '../support/server';
import {
  freePortRange,
  hasSipp,
  type SippRun,
  sippPath,
  sippUas,
  TRUNK_FAR_END_SCENARIO,
} from '../support/sipp';

/*
 * 线路管理 against a real far end: SIPp on loopback plays a carrier's IP trunk (OPTIONS answered,
 * one call answered or busy). The e2e server runs TELEPHONY=sip (support/global-setup.ts).
 */
const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let api: ProjectApi;
let workDir: string;
const sipps: SippRun[] = [];
const trunkIds: string[] = [];

if (!hasSipp) console.warn(`\n*** ${sippPath} is missing: the 线路管理 e2e tests are SKIPPED ***\n`);

beforeAll(async () => {
  if (!hasSipp) return;
  workDir = tempDir('e2e-trunks');
  browser = await launchBrowser();
  api = await openProjectApi(baseUrl, inject('demoEmail'), inject('demoPassword'));
});
afterAll(async () => {
  for (const sipp of sipps) sipp.kill();
  for (const id of trunkIds) await api.call('DELETE', `/trunks/${id}`).catch(() => undefined);
  await browser?.close();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

const suffix = () => Math.random().toString(36).slice(2, 7);

/** A far end on free ports of 127.0.0.1, gone after the file whatever happens. */
async function farEnd(): Promise<{ port: number; sipp: SippRun }> {
  const port = await freePortRange(1);
  // SIPp opens its audio port and the one two above it (video).
  const mediaPort = await freePortRange(4);
  const sipp = sippUas({ scenario: TRUNK_FAR_END_SCENARIO, port, mediaPort, workDir, seconds: 60 });
  sipps.push(sipp);
  return { port, sipp };
}

/** SIPp's exit code once it stopped by itself (its scenario stops after the call), at most `ms` later. */
async function exitOf(sipp: SippRun, ms = 15_000): Promise<number | string> {
  return Promise.race([
    sipp.exited,
    new Promise<string>((resolve) => setTimeout(() => resolve(`still running after ${ms} ms`), ms)),
  ]);
}

async function openTrunksPage(p: Page) {
  // The sidebar's 通话流程 opens the flow list; 线路管理 is a tab of that section.
  await p.getByRole('link', { name: '通话流程', exact: true }).click();
  await p.waitForURL((url) => url.pathname.startsWith('/ivr/'));
  await p.getByRole('navigation', { name: '通话流程导航' }).getByRole('link', { name: '线路管理' }).click();
  await p.waitForURL((url) => url.pathname === '/ivr/trunks');
  await expectVisible(p.getByRole('heading', { name: '线路管理' }), 'the trunks page');
}

const trunkRow = (p: Page, name: string) =>
  p.locator('.ant-table-tbody tr[data-row-key]').filter({ hasText: name });

/** Dials `number` from the trunk's 测试呼叫 dialog and waits for the outcome it shows. */
async function testCall(p: Page, row: Locator, name: string, number: string) {
  await row.getByRole('button', { name: '测试呼叫', exact: true }).click();
  const dialog = p.getByRole('dialog', { name: `测试呼叫 · ${name}` });
  await expectVisible(dialog, 'the 测试呼叫 dialog');
  await dialog.getByLabel('被叫号码', { exact: true }).fill(number);
  await dialog.getByRole('button', { name: '开始呼叫' }).click();
  const outcome = dialog.locator('.ant-alert').filter({ hasText: /^测试(成功|失败)：/ });
  await expectVisible(outcome, 'the test call outcome', 30_000);
  const steps = await dialog
    .getByRole('list', { name: 'SIP 过程' })
    .locator('> li')
    // Its parts (time, arrow, message, note) joined by one space each, as a reader tells them apart.
    .evaluateAll((items) =>
      items.map((item) =>
        Array.from(item.children)
          .map((part) => part.textContent?.trim() ?? '')
          .join(' '),
      ),
    );
  return { dialog, outcome: await textOf(outcome), steps };
}

/** A step as listed, without its time: `→ INVITE sip:… 发起呼叫`. */
const withoutTime = (step: string) => step.replace(/^\+\d+ ms /, '');

describe.skipIf(!hasSipp)('线路管理 against SIPp', () => {
  it('adds an IP trunk, sees its peer answer OPTIONS, and places a 测试呼叫 that rings, is answered and hung up', async () => {
    const { port, sipp } = await farEnd();
    const name = `E2E 本机中继 ${suffix()}`;
    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;
    await openTrunksPage(p);

    await p.getByRole('button', { name: '添加线路', exact: true }).click();
    const add = p.getByRole('dialog', { name: '添加线路' });
    await expectVisible(add, 'the add-trunk dialog');
    await add.getByLabel('线路名称', { exact: true }).fill(name);
    await add.getByRole('radio', { name: 'IP 对接' }).check();
    await add.getByLabel('信令地址', { exact: true }).fill(`127.0.0.1:${port}`);
    await add.getByLabel('对端地址', { exact: true }).fill('127.0.0.1');
    const created = p.waitForResponse(
      (res) => res.request().method() === 'POST' && res.url().endsWith('/trunks') && res.ok(),
    );
    await add.getByRole('button', { name: '添加', exact: true }).click();
    trunkIds.push(((await (await created).json()) as { data: Trunk }).data.id);

    // Listed with its address, and 可达 once SIPp answered the OPTIONS ping sent for the new trunk.
    const row = trunkRow(p, name);
    await expectVisible(row, `the row of ${name}`);
    expect(await textOf(row)).toContain(`127.0.0.1:${port}`);
    await expect.poll(() => textOf(row), { timeout: 20_000, message: sipp.log() }).toContain('可达');
    expect(await textOf(row)).not.toContain('不可达');

    const { dialog, outcome, steps } = await testCall(p, row, name, '13800138000');
    expect(outcome, sipp.log()).toBe('测试成功：接通后已挂断');
    expect(steps.map(withoutTime)).toEqual([
      '→ INVITE sip:13800138000@127.0.0.1 发起呼叫',
      '← 100 Trying 线路已受理',
      '← 180 Ringing 对方振铃',
      '← 200 OK 对方已接听',
      '· 播放测试语音',
      '→ BYE 测试完成，已挂断',
    ]);
    // Each step is stamped with the time since the INVITE, in order.
    const times = steps.map((step) => Number(/^\+(\d+) ms/.exec(step)?.[1]));
    expect(times.every(Number.isFinite)).toBe(true);
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    // SIPp's own verdict: the call went as its scenario says (ACK, then our BYE answered).
    expect(await exitOf(sipp), sipp.log()).toBe(0);
    // A test call belongs to no call record: it leaves no recording behind.
    const lineRecordings = path.join(inject('dataDir'), 'line-recordings');
    const left = fs.existsSync(lineRecordings) ? fs.readdirSync(lineRecordings) : [];
    expect(left.filter((file) => file.startsWith('trunk-test-'))).toEqual([]);

    // The footer's 关闭 (the title bar's × has the same name).
    await dialog.locator('.ant-modal-footer').getByRole('button', { name: '关闭', exact: true }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
  });

  it('reports a busy callee: the 486 step and a failure naming 忙线', async () => {
    const { port, sipp } = await farEnd();
    const name = `E2E 忙线中继 ${suffix()}`;
    // Set up through the API: adding a trunk in the console is the case above.
    const trunk = await api.call<Trunk>('POST', '/trunks', {
      name,
      kind: 'ip',
      signallingAddress: `127.0.0.1:${port}`,
      peerAddresses: ['127.0.0.1'],
    });
    trunkIds.push(trunk.id);
    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;
    await openTrunksPage(p);
    const row = trunkRow(p, name);
    await expectVisible(row, `the row of ${name}`);

    // The far end's script is busy for numbers starting with 486.
    const { outcome, steps } = await testCall(p, row, name, '4860001');
    expect(steps.map(withoutTime), sipp.log()).toEqual([
      '→ INVITE sip:4860001@127.0.0.1 发起呼叫',
      '← 100 Trying 线路已受理',
      '← 486 Busy Here 忙线',
    ]);
    expect(outcome).toBe('测试失败：忙线，对端返回 486 Busy Here（Q.850 原因 17 User busy）');
    expect(await exitOf(sipp), sipp.log()).toBe(0);
  });
});
