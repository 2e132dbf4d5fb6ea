import type { CallDetail } from '@callpilot/contracts';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { chooseOption, expectVisible, openLoggedIn, textOf } from '../support/console';
import { DEMO_ASSISTANT, demoSettled, openProjectApi, type ProjectApi } from '../support/project-api';

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let api: ProjectApi;

beforeAll(async () => {
  browser = await launchBrowser();
  api = await openProjectApi(baseUrl, inject('demoEmail'), inject('demoPassword'));
  await demoSettled(api, 240_000);
}, 250_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

const digits = (count: number) => String(Math.floor(Math.random() * 10 ** count)).padStart(count, '0');

/** What a row of the call records list showed, in the order it showed it. */
type RowState = { key: string; direction: string; status: string };

/**
 * Records every state of every row of the call records list as it renders, so "this call was
 * listed as live" does not depend on polling from here while the call (a few seconds at
 * SIM_TIME_SCALE=20) is running.
 */
function recordListRows(p: Page) {
  return p.evaluate(() => {
    const log: RowState[] = [];
    (window as unknown as { rowLog: RowState[] }).rowLog = log;
    const read = () => {
      for (const row of Array.from(document.querySelectorAll('.ant-table-tbody tr[data-row-key]'))) {
        const cells = row.querySelectorAll('td');
        const state = {
          key: row.getAttribute('data-row-key') ?? '',
          direction: cells[1]?.textContent?.trim() ?? '',
          status: cells[5]?.textContent?.trim() ?? '',
        };
        const last = log.findLast((entry) => entry.key === state.key);
        if (!last || last.status !== state.status || last.direction !== state.direction) log.push(state);
      }
    };
    read();
    new MutationObserver(read).observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });
}

const rowLog = (p: Page, key: string) =>
  p.evaluate(
    (wanted) => (window as unknown as { rowLog: RowState[] }).rowLog.filter((entry) => entry.key === wanted),
    key,
  );

describe('inbound calls', () => {
  it('binds a new number to the demo assistant, simulates a caller, follows the call live in the records and opens it in a new tab', async () => {
    // A Shanghai landline nobody else uses, and a caller to find the call by.
    const number = `0216${digits(7)}`;
    const caller = `139${digits(8)}`;
    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;

    // 1. 号码管理: a tab of the section the sidebar's 通话流程 opens (on its flow list).
    await p.getByRole('link', { name: '通话流程', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/ivr/list');
    await p.getByRole('navigation', { name: '通话流程导航' }).getByRole('link', { name: '号码管理' }).click();
    await p.waitForURL((url) => url.pathname === '/ivr/numbers');
    await expectVisible(p.getByRole('heading', { name: '号码管理' }), 'the numbers page');

    // 2. A new number.
    await p.getByRole('button', { name: '添加号码', exact: true }).click();
    const add = p.getByRole('dialog', { name: '添加号码' });
    await add.getByLabel('号码', { exact: true }).fill(number);
    await add.getByLabel('备注', { exact: true }).fill('E2E 来电测试');
    await add.getByRole('button', { name: '添加', exact: true }).click();
    const row = p.locator('.ant-table-tbody tr[data-row-key]').filter({ hasText: number });
    await expectVisible(row, `the row of ${number}`);
    expect(await textOf(row)).toContain('E2E 来电测试');
    expect(await textOf(row)).toContain('未绑定');

    // 3. Bound to the demo's published assistant.
    await row.getByRole('button', { name: '呼入设置', exact: true }).click();
    const bind = p.getByRole('dialog', { name: `呼入设置 · ${number}` });
    await expectVisible(bind, 'the inbound binding dialog');
    await chooseOption(
      p,
      bind.getByLabel('接听小助手', { exact: true }),
      new RegExp(`^${DEMO_ASSISTANT}（v\\d+）$`),
    );
    await bind.getByRole('button', { name: '保存', exact: true }).click();
    await expect.poll(() => textOf(row), { timeout: 10_000 }).toContain(DEMO_ASSISTANT);
    const saved = (await api.get<{ number: string; inboundAssistantName: string | null }[]>('/numbers')).find(
      (candidate) => candidate.number === number,
    );
    expect(saved?.inboundAssistantName).toBe(DEMO_ASSISTANT);

    // 4. The call records list, open in a second tab before the call is placed, records what it shows.
    const list = await context.newPage();
    await list.goto('/call-record/list');
    await expectVisible(list.getByRole('heading', { name: '通话记录' }), 'the call record list');
    await expect.poll(() => textOf(list.locator('.ant-pagination-total-text'))).toMatch(/^共 \d+ 条$/);
    await recordListRows(list);

    // 5. 模拟来电 on the number: a caller who is interested.
    await p.bringToFront();
    await row.getByRole('button', { name: '模拟来电', exact: true }).click();
    const dialog = p.getByRole('dialog', { name: '模拟来电' });
    await expectVisible(dialog, 'the 模拟来电 dialog');
    expect(await textOf(dialog)).toContain(`${number} · E2E 来电测试 · 由「${DEMO_ASSISTANT}」接听`);
    await chooseOption(p, dialog.getByLabel('模拟客户', { exact: true }), '有意向的客户');
    await dialog.getByLabel('主叫号码', { exact: true }).fill(caller);
    const started = p.waitForResponse((res) => res.url().endsWith('/calls/test-inbound') && res.ok());
    await dialog.getByRole('button', { name: '开始模拟', exact: true }).click();
    const callId = ((await (await started).json()) as { data: { callId: string } }).data.callId;

    // The dialog follows it: the assistant answers and turns arrive, then it ends.
    const transcript = dialog.getByRole('list', { name: '模拟来电内容' }).locator('> li');
    await expect.poll(() => textOf(transcript.first()), { timeout: 20_000 }).toMatch(/^小助手 \d\d:\d\d/);
    const status = dialog.getByLabel('通话状态', { exact: true });
    await expect.poll(() => textOf(status), { timeout: 60_000 }).toMatch(/^已结束：/);

    // 6. The list showed it live, as 呼入, then ended.
    await expect
      .poll(async () => (await rowLog(list, callId)).at(-1)?.status, { timeout: 20_000 })
      .toBe('已结束');
    const states = await rowLog(list, callId);
    expect(states.map((state) => state.direction)).toEqual(states.map(() => '呼入'));
    expect(states.map((state) => state.status)).toContain('通话中');
    expect(states.findIndex((state) => state.status === '通话中')).toBeLessThan(
      states.findIndex((state) => state.status === '已结束'),
    );

    // 7. Ctrl-click on the row's link: the detail opens in a new tab, the list stays.
    await list.bringToFront();
    const listRow = list.locator(`.ant-table-tbody tr[data-row-key="${callId}"]`);
    const newTab = context.waitForEvent('page');
    await listRow.getByRole('link', { name: '详情', exact: true }).click({ modifiers: ['Control'] });
    const detail = await newTab;
    await detail.waitForURL((url) => url.pathname === `/call-record/detail/${encodeURIComponent(callId)}`);
    expect(new URL(list.url()).pathname).toBe('/call-record/list');

    // 8. The new tab shows the call and its transcript, as recorded.
    const facts = detail.getByRole('region', { name: '通话信息' });
    await expectVisible(facts, 'the call facts in the new tab', 20_000);
    expect(await textOf(facts)).toContain('方向呼入');
    expect(await textOf(facts)).toContain(`主叫${caller}`);
    expect(await textOf(facts)).toContain(`被叫${number}`);
    expect(await textOf(facts)).toContain(`小助手${DEMO_ASSISTANT}`);
    const recorded = await api.get<CallDetail>(`/calls/${encodeURIComponent(callId)}`);
    expect(recorded.direction).toBe('inbound');
    expect(recorded.turns.length).toBeGreaterThanOrEqual(2);
    const turns = detail.getByRole('list', { name: '对话记录' }).locator('> li');
    await expect.poll(() => turns.count(), { timeout: 10_000 }).toBe(recorded.turns.length);
    // The detail puts speaker, offset and text in separate blocks: no spaces between them.
    expect(await textOf(turns.first())).toMatch(/^小助手 ?\d\d:\d\d/);
    expect(await textOf(turns.first())).toContain(recorded.turns[0]!.text.replace(/\s+/g, ' ').trim());
    const lastTurn = recorded.turns.at(-1)!;
    expect(await textOf(turns.last())).toContain(lastTurn.text.replace(/\s+/g, ' ').trim());
  }, 150_000);
});
