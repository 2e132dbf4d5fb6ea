import type { CallDetail, CallList, CallTurn } from '@callpilot/contracts';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { chooseOption, expectVisible, openLoggedIn, textOf } from '../support/console';
import { DEMO_ASSISTANT, demoSettled, openProjectApi, type ProjectApi } from '../support/project-api';

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let api: ProjectApi;

const TIME_DISPLAY = /^(\d\d):(\d\d) \/ (\d\d):(\d\d)$/;

beforeAll(async () => {
  browser = await launchBrowser();
  api = await openProjectApi(baseUrl, inject('demoEmail'), inject('demoPassword'));
  await demoSettled(api, 170_000);
}, 180_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

/** Every HTMLMediaElement that played, and where each seek went: wavesurfer's <audio> is its own. */
const RECORD_MEDIA = () => {
  const played: (HTMLMediaElement & { seeks: number[] })[] = [];
  (window as unknown as { playedMedia: typeof played }).playedMedia = played;
  const play = HTMLMediaElement.prototype.play;
  HTMLMediaElement.prototype.play = function (this: HTMLMediaElement & { seeks: number[] }) {
    if (!played.includes(this)) {
      this.seeks = [];
      this.addEventListener('seeking', () => this.seeks.push(this.currentTime));
      played.push(this);
    }
    return play.call(this);
  };
};

async function open(): Promise<Page> {
  const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
  context = opened.context;
  // In this document (logged in already) and in any reloaded one.
  await context.addInitScript(RECORD_MEDIA);
  await opened.page.evaluate(RECORD_MEDIA);
  return opened.page;
}

/** The one played media element's position and the seeks it made. */
function media(p: Page) {
  return p.evaluate(() => {
    const played = (window as unknown as { playedMedia: (HTMLMediaElement & { seeks: number[] })[] })
      .playedMedia;
    const [element] = played;
    return element
      ? { count: played.length, time: element.currentTime, paused: element.paused, seeks: [...element.seeks] }
      : { count: 0, time: 0, paused: true, seeks: [] as number[] };
  });
}

function callList(p: Page) {
  return {
    number: p.getByLabel('号码', { exact: true }),
    rangeStart: p.getByPlaceholder('开始日期', { exact: true }),
    endReason: p.getByLabel('结束原因', { exact: true }),
    /** The end reason Select's chips (antd keeps them in the DOM even when folded into "+ N"). */
    endReasonChips: p
      .locator('.ant-select')
      .filter({ has: p.getByLabel('结束原因', { exact: true }) })
      .locator('.ant-select-selection-item[title]:not([title^="+"])'),
    search: p.getByRole('button', { name: '查询', exact: true }),
    total: p.locator('.ant-pagination-total-text'),
    activePage: p.locator('.ant-pagination-item-active'),
    rows: p.locator('.ant-table-tbody tr[data-row-key]'),
  };
}

const rowKeys = (list: ReturnType<typeof callList>) =>
  list.rows.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-row-key') ?? ''));

/** Waits for the pagination to show `total` (共 N 条). */
async function expectTotal(list: ReturnType<typeof callList>, total: string | RegExp, timeout = 15_000) {
  await expect.poll(() => textOf(list.total), { timeout }).toMatch(total);
}

async function openCallRecords(p: Page) {
  await p.getByRole('link', { name: '通话记录', exact: true }).click();
  await p.waitForURL((url) => url.pathname === '/call-record/list');
  await expectVisible(p.getByRole('heading', { name: '通话记录' }), 'the call record list');
  await expectTotal(callList(p), /^共 \d+ 条$/);
}

/** Where the detail page's 返回 leads: the list, marked back=1 to restore its filters and page. */
const isListReturn = (url: URL) =>
  url.pathname === '/call-record/list' && url.searchParams.get('back') === '1';

/**
 * A recording is mixed after the call; while it is, the detail page says 录音生成中 with a 刷新
 * link. Refreshes until the player's 播放 button can be pressed.
 */
async function waitForPlayer(p: Page, timeoutMs: number) {
  const recording = p.getByRole('region', { name: '录音' });
  const play = recording.getByRole('button', { name: '播放', exact: true });
  const refresh = recording.getByRole('button', { name: '刷新', exact: true });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await play.isVisible()) && (await play.isEnabled())) return;
    if (await refresh.isVisible()) await refresh.click().catch(() => undefined);
    await p.waitForTimeout(1000);
  }
  throw new Error(`the recording did not become playable in ${timeoutMs} ms: ${await textOf(recording)}`);
}

describe('call records', () => {
  it('runs a simulated call, finds it by number, plays and seeks its recording, re-grades it and goes back', async () => {
    const number = `139${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    const p = await open();

    // 1. 模拟通话 from the demo assistant's editor.
    await p.getByRole('link', { name: '智能小助手', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/assistant/list');
    await p.getByRole('link', { name: DEMO_ASSISTANT, exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/assistant/edit' && url.searchParams.has('id'));
    const startDialog = p.getByRole('button', { name: '模拟通话', exact: true });
    await expect.poll(() => startDialog.isEnabled(), { timeout: 10_000 }).toBe(true);
    await startDialog.click();
    const dialog = p.getByRole('dialog', { name: '模拟通话' });
    await expectVisible(dialog, 'the 模拟通话 dialog');
    await chooseOption(p, dialog.getByLabel('模拟客户', { exact: true }), '有意向的客户');
    await dialog.getByLabel('被叫号码', { exact: true }).fill(number);

    // The call runs in a few seconds (SIM_TIME_SCALE=20): every render is recorded in the page, so
    // "turns appear while the call is live" does not depend on polling fast enough from here.
    await p.evaluate(() => {
      const log: { status: string; turns: number }[] = [];
      (window as unknown as { liveLog: typeof log }).liveLog = log;
      const read = () => {
        const status = document.querySelector('[aria-label="通话状态"]')?.textContent?.trim() ?? '';
        const items = document.querySelectorAll('ol[aria-label="模拟通话内容"] > li');
        const turns = Array.from(items).filter((li) =>
          /^(小助手|客户) \d\d:\d\d/.test(li.textContent ?? ''),
        ).length;
        const last = log.at(-1);
        if (status && (last?.status !== status || last.turns !== turns)) log.push({ status, turns });
      };
      new MutationObserver(read).observe(document.body, {
        subtree: true,
        childList: true,
        characterData: true,
      });
    });
    await dialog.getByRole('button', { name: '开始模拟', exact: true }).click();
    const status = dialog.getByLabel('通话状态', { exact: true });
    await expect.poll(() => textOf(status), { timeout: 45_000 }).toMatch(/^已结束：/);
    const liveLog = await p.evaluate(
      () => (window as unknown as { liveLog: { status: string; turns: number }[] }).liveLog,
    );
    const liveTurnCounts = new Set(
      liveLog.filter((s) => s.status === '通话中' && s.turns > 0).map((s) => s.turns),
    );
    expect(liveTurnCounts.size, `turns seen while 通话中: ${JSON.stringify(liveLog)}`).toBeGreaterThanOrEqual(
      2,
    );
    const endedAs = (await textOf(status)).replace('已结束：', '');
    // A talking persona gets answered: the end reason is one of an answered call's.
    expect(['正常结束', '客户挂断', '客户拒绝（已加入免打扰）', '已转人工']).toContain(endedAs);
    const dialogTurns = dialog.getByRole('list', { name: '模拟通话内容' }).locator('> li');
    const turnCount = await dialogTurns.count();
    expect(turnCount).toBeGreaterThanOrEqual(Math.max(...liveTurnCounts));
    expect(await textOf(dialogTurns.first())).toMatch(/^小助手 00:00 ?您好/);

    // The analysis follows the end: grade and summary.
    const outcome = dialog.getByRole('region', { name: '通话结果' });
    await expectVisible(outcome, 'the grade and summary of the call', 30_000);
    const gradeLabel = await textOf(outcome.locator('.ant-tag'));
    expect(gradeLabel).toMatch(/^[ABCD] (有明确意向|可能有意向|无明确意向|明确拒绝)$/);
    const summary = await textOf(outcome.locator('p'));
    expect(summary).not.toBe('');
    expect(summary).not.toBe('暂无摘要');
    // The footer's 关闭 (the corner ✕ has the same accessible name, but no text).
    await dialog.getByRole('button', { name: '关闭', exact: true }).filter({ hasText: '关闭' }).click();
    await expect.poll(() => dialog.count()).toBe(0);

    // 2. The newest call heads the list; the number filter finds it and only it.
    await openCallRecords(p);
    const list = callList(p);
    expect(await textOf(list.rows.first())).toContain(number);
    await list.number.fill(number);
    await list.search.click();
    await expectTotal(list, '共 1 条');
    expect(await list.rows.count()).toBe(1);
    const row = await textOf(list.rows.first());
    expect(row).toContain(`${number}${DEMO_ASSISTANT}已结束${endedAs}`);
    expect(row).toContain(gradeLabel);

    // 3. Its detail: the recording plays and clicking a turn seeks to it.
    await list.rows.first().getByRole('link', { name: '详情', exact: true }).click();
    await p.waitForURL((url) => url.pathname.startsWith('/call-record/detail/'));
    const callId = decodeURIComponent(new URL(p.url()).pathname.split('/').pop() ?? '');
    const facts = p.getByRole('region', { name: '通话信息' });
    await expectVisible(facts, 'the call facts');
    expect(await textOf(facts)).toContain(`被叫${number}`);
    expect(await textOf(facts)).toContain(`模拟客户有意向的客户`);
    expect(await textOf(facts)).toContain(`结束原因${endedAs}`);

    await waitForPlayer(p, 60_000);
    // Fetched once the recording is ready: mixing sets the turns' offsets to where they are heard.
    const call = await api.get<CallDetail>(`/calls/${encodeURIComponent(callId)}`);
    expect(call.recording).toBe('ready');
    expect(call.turns.length).toBe(turnCount);
    const transcript = p.getByRole('list', { name: '对话记录' }).locator('> li');
    expect(await transcript.count()).toBe(turnCount);

    const recording = p.getByRole('region', { name: '录音' });
    const timeDisplay = recording.getByText(TIME_DISPLAY);
    const seconds = async (part: 'position' | 'length') => {
      const [, m1, s1, m2, s2] = TIME_DISPLAY.exec(await textOf(timeDisplay)) ?? [];
      return part === 'position' ? Number(m1) * 60 + Number(s1) : Number(m2) * 60 + Number(s2);
    };
    expect(await seconds('position')).toBe(0);
    const length = await seconds('length');
    expect(length).toBeGreaterThan(10);
    await recording.getByRole('button', { name: '播放', exact: true }).click();
    await expectVisible(recording.getByRole('button', { name: '暂停', exact: true }), 'the 暂停 button');
    // Playback advances: the element's clock and the time shown both move past the first second.
    await expect.poll(async () => (await media(p)).time, { timeout: 15_000 }).toBeGreaterThan(1);
    await expect.poll(() => seconds('position'), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    const before = await media(p);
    expect(before.count).toBe(1);
    expect(before.paused).toBe(false);

    // A later turn: the player jumps forward to it.
    const target = pickTurn(call.turns, length);
    const targetSeconds = target.startMs / 1000;
    await transcript.nth(target.index).getByRole('button').click();
    await expect
      .poll(async () => (await media(p)).seeks.length, { timeout: 10_000 })
      .toBeGreaterThan(before.seeks.length);
    const seekTo = (await media(p)).seeks.at(-1) ?? -1;
    expect(
      Math.abs(seekTo - targetSeconds),
      `seeked to ${seekTo}, turn at ${targetSeconds}`,
    ).toBeLessThanOrEqual(1);
    await expect
      .poll(() => transcript.nth(target.index).getAttribute('aria-current'), { timeout: 10_000 })
      .toBe('true');
    expect(await p.locator('ol[aria-label="对话记录"] > li[aria-current="true"]').count()).toBe(1);
    const shown = await seconds('position');
    expect(shown).toBeGreaterThanOrEqual(Math.floor(targetSeconds) - 1);
    expect(shown).toBeLessThanOrEqual(Math.ceil(target.endMs / 1000) + 1);
    await recording.getByRole('button', { name: '暂停', exact: true }).click();
    await expect.poll(async () => (await media(p)).paused).toBe(true);

    // 4. A human grade other than the machine's; it survives a reload.
    const analysis = p.getByRole('region', { name: '通话分析' });
    expect(await textOf(analysis)).toContain(`机器评级${gradeLabel}`);
    const humanGrade = gradeLabel.startsWith('A') ? 'B 可能有意向' : 'A 有明确意向';
    const humanSelect = analysis.locator('.ant-select').filter({ has: p.getByLabel('人工评级') });
    const saved = p.waitForResponse(
      (res) => res.url().endsWith(`/calls/${encodeURIComponent(callId)}/grade`) && res.ok(),
    );
    await chooseOption(p, analysis.getByLabel('人工评级', { exact: true }), humanGrade);
    await saved;
    await expectVisible(p.getByText('已保存人工评级', { exact: true }), 'the saved toast');
    const reviewed = /于 \d{4}-\d\d-\d\d \d\d:\d\d:\d\d 复核$/;
    const expectHumanGrade = async () => {
      await expect.poll(() => textOf(humanSelect), { timeout: 10_000 }).toBe(humanGrade);
      expect(await textOf(analysis.getByText(reviewed))).toMatch(reviewed);
      // The machine's grade is kept next to the human one.
      expect(await textOf(analysis)).toContain(`机器评级${gradeLabel}`);
    };
    await expectHumanGrade();
    await p.reload();
    await expectVisible(analysis, 'the analysis after the reload');
    await expectHumanGrade();

    // 5. 返回: the list as it was left (after the reload too), now with the human grade.
    await p.getByRole('button', { name: '返回', exact: true }).click();
    await p.waitForURL(isListReturn);
    await expectTotal(list, '共 1 条');
    expect(await list.number.inputValue()).toBe(number);
    expect(await rowKeys(list)).toEqual([callId]);
    await expect.poll(() => textOf(list.rows.first()), { timeout: 10_000 }).toContain(`${humanGrade}人工`);
  }, 120_000);

  it('goes back from a call on page 2 to page 2 of the same filtered list', async () => {
    const p = await open();
    await openCallRecords(p);
    const list = callList(p);

    // The last 30 days (the default 7 can hold fewer than a page of them) and 正常结束 only.
    const from = await p.evaluate(() => {
      const day = new Date();
      day.setDate(day.getDate() - 29);
      const pad = (n: number) => String(n).padStart(2, '0');
      return `${day.getFullYear()}-${pad(day.getMonth() + 1)}-${pad(day.getDate())} 00:00:00`;
    });
    await list.rangeStart.click();
    await list.rangeStart.fill(from);
    await list.rangeStart.press('Enter');
    // The end keeps its default; Enter there confirms the range and closes the picker.
    await p.keyboard.press('Enter');
    await expect.poll(() => list.rangeStart.inputValue()).toBe(from);
    await chooseOption(p, list.endReason, '正常结束');
    await p.keyboard.press('Escape');
    // Enter in the picker already searched by the range alone: wait for the answer with the reason.
    const page1Loaded = p.waitForResponse(
      (res) => /\/calls\?/.test(res.url()) && res.url().includes('endReason=completed') && res.ok(),
    );
    await list.search.click();
    const { total } = ((await (await page1Loaded).json()) as { data: CallList }).data;
    expect(total).toBeGreaterThan(20);
    await expectTotal(list, `共 ${total} 条`);
    expect(await list.rows.count()).toBe(20);
    const firstPage = await rowKeys(list);

    await p.locator('.ant-pagination').getByTitle('2', { exact: true }).click();
    await expect.poll(() => textOf(list.activePage)).toBe('2');
    await expect.poll(async () => (await rowKeys(list))[0], { timeout: 15_000 }).not.toBe(firstPage[0]);
    const secondPage = await rowKeys(list);
    expect(secondPage.length).toBe(Math.min(20, total - 20));
    expect(secondPage.filter((key) => firstPage.includes(key))).toEqual([]);
    for (const text of await list.rows.allTextContents()) expect(text).toContain('已结束正常结束');

    const opened = list.rows.nth(3);
    const openedKey = secondPage[3]!;
    // The 被叫 column: a mobile for an outbound call, the project's landline for an inbound one.
    const callee = /1\d{10}|0\d{9,11}/.exec(await textOf(opened.locator('td').nth(3)))?.[0];
    expect(callee).toBeDefined();
    await opened.getByRole('link', { name: '详情', exact: true }).click();
    await p.waitForURL((url) => url.pathname === `/call-record/detail/${encodeURIComponent(openedKey)}`);
    const facts = p.getByRole('region', { name: '通话信息' });
    await expectVisible(facts, 'the call facts');
    expect(await textOf(facts)).toContain('结束原因正常结束');
    expect(await textOf(facts)).toContain(`被叫${callee}`);

    await p.getByRole('button', { name: '返回', exact: true }).click();
    await p.waitForURL(isListReturn);
    await expect.poll(() => textOf(list.activePage), { timeout: 15_000 }).toBe('2');
    await expectTotal(list, `共 ${total} 条`);
    await expect.poll(() => rowKeys(list), { timeout: 15_000 }).toEqual(secondPage);
    expect(await list.rangeStart.inputValue()).toBe(from);
    expect(
      await list.endReasonChips.evaluateAll((chips) => chips.map((c) => c.getAttribute('title'))),
    ).toEqual(['正常结束']);
    expect(await list.number.inputValue()).toBe('');
  });
});

/**
 * The longest assistant turn in the second half of the call (at least 3 s, not at the very end),
 * so the playhead is still inside it when the highlight is checked.
 */
function pickTurn(turns: CallTurn[], lengthSeconds: number): CallTurn {
  const candidates = turns.filter(
    (turn) =>
      turn.speaker === 'assistant' &&
      turn.index >= 2 &&
      turn.endMs - turn.startMs >= 3000 &&
      turn.startMs / 1000 + 3 < lengthSeconds,
  );
  const later = candidates.filter((turn) => turn.index >= turns.length / 2);
  const pool = later.length > 0 ? later : candidates;
  const turn = pool.reduce<CallTurn | undefined>(
    (best, t) => (!best || t.endMs - t.startMs > best.endMs - best.startMs ? t : best),
    undefined,
  );
  if (!turn)
    throw new Error(`no turn to seek to in ${JSON.stringify(turns.map((t) => [t.startMs, t.endMs]))}`);
  return turn;
}
