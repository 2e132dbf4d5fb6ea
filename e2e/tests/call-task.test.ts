import fs from 'node:fs';
import type { TaskDetail } from '@callpilot/contracts';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { chooseOption, expectVisible, openLoggedIn, textOf, waitForToastsToLeave } from '../support/console';
import {
  chinaDate,
  DEMO_ASSISTANT,
  demoSettled,
  openProjectApi,
  type ProjectApi,
} from '../support/project-api';

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let api: ProjectApi;

const DAY_MS = 24 * 3600_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

/** A random mobile number: the project's per-number daily cap must not meet the demo's numbers. */
const randomMobile = (prefix: string) =>
  `${prefix}${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;

/** A minimal RFC 4180 reader: enough for the reject file (quoted cells, doubled quotes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

type Stats = { finished: number; active: number; total: number; progress: string };

/** The detail page's stat cards (任务统计) and its progress text ("finished/total"). */
function readStats(p: Page): Promise<Stats | null> {
  return p.evaluate(() => {
    const dl = document.querySelector('dl[aria-label="任务统计"]');
    if (!dl) return null;
    const value = (label: string) => {
      for (const card of Array.from(dl.children)) {
        if (card.querySelector('dt')?.textContent?.trim() === label) {
          return Number((card.querySelector('dd')?.textContent ?? '').replace(/[^\d]/g, ''));
        }
      }
      return Number.NaN;
    };
    const progress =
      document.querySelector(
        '[aria-label="任务进度"] .ant-progress-indicator, [aria-label="任务进度"] .ant-progress-text',
      )?.textContent ?? '';
    return {
      finished: value('已完成'),
      active: value('呼叫中'),
      total: value('联系人'),
      progress: progress.trim(),
    };
  });
}

/**
 * Records every change of the stat cards in the page (a MutationObserver), so "呼叫中 was above 0"
 * and "已完成 grew" do not depend on polling at the right moment. A marker on window proves that
 * the document was never reloaded in between.
 */
async function recordStats(p: Page) {
  await p.evaluate(() => {
    type Entry = { t: number; finished: number; active: number; state: string };
    const log: Entry[] = [];
    const w = window as unknown as { statLog: Entry[]; sameDocument: boolean };
    w.statLog = log;
    w.sameDocument = true;
    const read = () => {
      const dl = document.querySelector('dl[aria-label="任务统计"]');
      if (!dl) return;
      const value = (label: string) => {
        for (const card of Array.from(dl.children)) {
          if (card.querySelector('dt')?.textContent?.trim() === label) {
            return Number((card.querySelector('dd')?.textContent ?? '').replace(/[^\d]/g, ''));
          }
        }
        return Number.NaN;
      };
      const state = document.querySelector('main header .ant-tag')?.textContent?.trim() ?? '';
      const entry = { t: Date.now(), finished: value('已完成'), active: value('呼叫中'), state };
      const last = log.at(-1);
      if (!last || last.finished !== entry.finished || last.active !== entry.active || last.state !== state) {
        log.push(entry);
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

type StatEntry = { t: number; finished: number; active: number; state: string };
function statLog(p: Page): Promise<{ log: StatEntry[]; sameDocument: boolean }> {
  return p.evaluate(() => {
    const w = window as unknown as { statLog?: StatEntry[]; sameDocument?: boolean };
    return { log: [...(w.statLog ?? [])], sameDocument: w.sameDocument === true };
  });
}

describe('call tasks', () => {
  it('creates a task, imports a file with bad rows, starts it, watches it live, pauses, resumes, finishes and opens a call', async () => {
    const taskName = `e2e 外呼任务 ${Date.now().toString(36)}`;

    // The contacts file: 24 good numbers, 3 invalid, 2 repeats (written differently), 1 on the
    // project's do-not-call list.
    const good = new Set<string>();
    while (good.size < 24) good.add(randomMobile('139'));
    const goodNumbers = [...good];
    const blocked = randomMobile('138');
    await api.call('POST', '/do-not-call', { phone: blocked });
    const invalid = ['12345', '1391234', '=1+2'];
    const rows: [string, string][] = goodNumbers.map((n, i) => [n, `客户${i + 1}`]);
    // Positions are 1-based data rows; the header is line 1 of the file.
    rows.splice(5, 0, [invalid[0]!, '无效甲']);
    rows.splice(11, 0, [
      `+86 ${goodNumbers[2]!.slice(0, 3)}-${goodNumbers[2]!.slice(3, 7)}-${goodNumbers[2]!.slice(7)}`,
      '重复甲',
    ]);
    rows.splice(17, 0, [invalid[1]!, '无效乙']);
    rows.splice(20, 0, [blocked, '免打扰丙']);
    rows.splice(24, 0, [goodNumbers[10]!, '重复乙']);
    rows.splice(28, 0, [invalid[2]!, '无效丙']);
    expect(rows).toHaveLength(30);
    const csv = `号码,姓名\n${rows.map(([n, name]) => `${n},${name}`).join('\n')}\n`;
    const fileName = `联系人-${Date.now()}.csv`;

    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;

    // 1. 新建任务: 基本设置.
    await p.goto('/call-task/list');
    await expectVisible(p.getByRole('heading', { name: '呼出任务' }), 'the task list');
    const create = p.getByRole('button', { name: '新建任务', exact: true });
    await expect
      .poll(() => create.isEnabled(), { timeout: 15_000, message: '新建任务 should be enabled' })
      .toBe(true);
    await create.click();
    await p.waitForURL((url) => url.pathname === '/call-task/add');
    await p.getByLabel('任务名称', { exact: true }).fill(taskName);
    await chooseOption(p, p.getByLabel('小助手', { exact: true }), new RegExp(`^${DEMO_ASSISTANT}`));
    // The version follows the assistant: its latest published one.
    await expect
      .poll(() => textOf(p.locator('.ant-select').filter({ has: p.getByLabel('版本', { exact: true }) })), {
        timeout: 15_000,
        message: 'the latest published version should be chosen',
      })
      .toMatch(/^v\d+/);

    const today = chinaDate(Date.now());
    const inAWeek = chinaDate(Date.now() + 7 * DAY_MS);
    const dateStart = p.getByPlaceholder('开始日期', { exact: true });
    const dateEnd = p.getByPlaceholder('结束日期', { exact: true });
    // Typed, then left by clicking: Enter in the picker also submits the whole form.
    await dateStart.click();
    await dateStart.fill(today);
    await dateEnd.click();
    await dateEnd.fill(inAWeek);
    await p.getByRole('heading', { name: '新建呼出任务' }).click();
    await expect.poll(() => dateStart.inputValue()).toBe(today);
    await expect.poll(() => dateEnd.inputValue()).toBe(inAWeek);

    // One window, every day, the whole day: the test must not depend on the hour it runs at.
    await p.getByRole('button', { name: '删除时段 2', exact: true }).click();
    await expect.poll(() => p.getByLabel('时段 2 星期', { exact: true }).count()).toBe(0);
    const days = p.getByLabel('时段 1 星期', { exact: true });
    for (const day of ['周一', '周二', '周三', '周四', '周五', '周六', '周日']) {
      const box = days.getByLabel(day, { exact: true });
      if (!(await box.isChecked())) await box.check();
    }
    const times = p.locator('.ant-picker-range').filter({ has: p.locator('input[placeholder="开始时间"]') });
    const timeStart = times.locator('input').nth(0);
    const timeEnd = times.locator('input').nth(1);
    // A time range needs its 确定 for each end.
    const confirmTime = p.locator('.ant-picker-dropdown .ant-picker-ok button').filter({ visible: true });
    await timeStart.click();
    await timeStart.fill('00:00');
    await confirmTime.click();
    await timeEnd.fill('23:59');
    await confirmTime.click();
    await expect.poll(() => timeStart.inputValue()).toBe('00:00');
    await expect.poll(() => timeEnd.inputValue()).toBe('23:59');
    // Nor on the calendar: on a public holiday the task would wait for the next workday.
    const holidays = p.getByRole('switch', { name: '跳过法定节假日' });
    if ((await holidays.getAttribute('aria-checked')) === 'true') await holidays.click();
    await expect.poll(() => holidays.getAttribute('aria-checked')).toBe('false');
    await p.getByLabel('并发数', { exact: true }).fill('5');
    // No retries: every contact ends after one call, so the task finishes within the test.
    for (const outcome of ['未接听', '忙线', '关机', '拒接', '呼叫失败', '系统中断']) {
      await p.getByLabel(`${outcome}重拨次数`, { exact: true }).fill('0');
    }
    await p.getByRole('button', { name: '保存并下一步', exact: true }).click();
    await p.waitForURL(
      (url) =>
        url.pathname === '/call-task/add' &&
        url.searchParams.has('id') &&
        url.searchParams.get('step') === '1',
      { timeout: 15_000 },
    );
    const taskId = new URL(p.url()).searchParams.get('id')!;
    const saved = await api.get<TaskDetail>(`/tasks/${encodeURIComponent(taskId)}`);
    expect(saved.name).toBe(taskName);
    expect(saved.state).toBe('draft');
    expect(saved.assistantName).toBe(DEMO_ASSISTANT);
    expect(saved.settings.startDate).toBe(today);
    expect(saved.settings.endDate).toBe(inAWeek);
    // The picker's last minute is stored as the end of the day.
    expect(saved.settings.windows).toEqual([{ days: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '24:00' }]);
    expect(saved.settings.skipHolidays).toBe(false);
    expect(saved.settings.concurrency).toBe(5);
    expect(saved.settings.retryRules).toEqual({});

    // 导入联系人: the file, counted with its bad rows.
    await p.locator('input[type="file"]').setInputFiles({
      name: fileName,
      mimeType: 'text/csv',
      buffer: Buffer.from(csv, 'utf8'),
    });
    const preview = p.getByRole('region', { name: '导入预览' });
    await expectVisible(preview, 'the import preview', 30_000);
    const counts = preview.getByLabel('校验结果', { exact: true });
    const count = async (label: string) => {
      const cell = counts.locator('> div').filter({ has: p.locator('dt', { hasText: label }) });
      return Number((await textOf(cell.locator('dd'))).replace(/\D/g, ''));
    };
    await expect.poll(() => count('总行数'), { timeout: 10_000 }).toBe(30);
    expect(await count('有效')).toBe(24);
    expect(await count('号码无效')).toBe(3);
    expect(await count('重复')).toBe(2);
    expect(await count('免打扰')).toBe(1);

    // The invalid rows, downloaded as the browser saves them.
    const downloading = p.waitForEvent('download', { timeout: 15_000 });
    await preview.getByRole('button', { name: '下载号码无效', exact: true }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toMatch(/\.csv$/);
    const rejectPath = await download.path();
    const rejectBytes = fs.readFileSync(rejectPath);
    // The BOM, so Excel reads the Chinese as UTF-8.
    expect([...rejectBytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rejectRows = parseCsv(rejectBytes.toString('utf8').slice(1)).filter((r) => r.some((c) => c !== ''));
    expect(rejectRows[0]).toEqual(['原行号', '号码', '姓名', '原因', '号码', '姓名']);
    const rejected = rejectRows.slice(1);
    expect(rejected.map((r) => r[2])).toEqual(['无效甲', '无效乙', '无效丙']);
    // 原行号 is the line in the sheet (the header is line 1): each names its own row of the file.
    for (const r of rejected) {
      const n = Number(r[0]);
      expect(rows[n - 2]?.[1], `line ${n} of the file`).toBe(r[2]);
      expect(r[3], `the reason of row ${n}`).not.toBe('');
    }
    // A cell a spreadsheet would run as a formula comes back escaped.
    expect(rejected[2]!.slice(4)).toEqual(["'=1+2", '无效丙']);

    await preview.getByRole('button', { name: '确认导入', exact: true }).click();
    await expectVisible(p.getByText('已导入 24 个联系人', { exact: true }), 'the import result', 20_000);
    await expect
      .poll(async () => (await api.get<TaskDetail>(`/tasks/${encodeURIComponent(taskId)}`)).counts.total, {
        timeout: 10_000,
      })
      .toBe(24);

    // 2. 预检 and 立即启动.
    await p.getByRole('button', { name: '下一步', exact: true }).click();
    await p.waitForURL((url) => url.searchParams.get('step') === '2');
    const checks = p.locator('.ant-descriptions');
    await expectVisible(checks, 'the preflight', 20_000);
    const check = async (label: string) =>
      textOf(checks.locator('.ant-descriptions-item-content').nth(await labelIndex(checks, label)));
    expect(await check('联系人')).toBe('24 个');
    // No retries: at most one call per contact.
    expect(await check('最多呼叫')).toBe('24 次（含重拨）');
    expect(await check('并发数')).toMatch(/^5 路/);
    await expectVisible(p.getByText('预检通过，可以启动', { exact: true }), 'the passed preflight');
    // The live progress comes from the task's event stream, opened by the detail page.
    const streams: string[] = [];
    p.on('request', (req) => {
      if (req.url().includes('/tasks/events')) streams.push(req.url());
    });
    await p.getByRole('button', { name: '立即启动', exact: true }).click();
    await p.waitForURL((url) => url.pathname === `/call-task/task-detail/${encodeURIComponent(taskId)}`, {
      timeout: 15_000,
    });

    await expectVisible(p.getByLabel('任务统计', { exact: true }), 'the task stats', 15_000);
    await recordStats(p);
    const stateTag = p.locator('main header .ant-tag');
    await expect.poll(() => textOf(stateTag), { timeout: 15_000 }).toBe('进行中');
    const startedStats = await readStats(p);
    expect(startedStats?.total).toBe(24);

    // Under way: some calls finished, some live (at concurrency 5 with 24 contacts, there is time).
    await expect
      .poll(
        async () => {
          const { log } = await statLog(p);
          const last = log.at(-1)?.finished ?? 0;
          // Grown while watched (not merely loaded that way), with calls seen live on the way.
          return log.some((e) => e.active > 0) && last >= 3 && last > (log[0]?.finished ?? 0);
        },
        {
          timeout: 60_000,
          interval: 250,
          message: '已完成 should grow to at least 3 on the open page, with 呼叫中 above 0 at some point',
        },
      )
      .toBe(true);
    const watched = await statLog(p);
    expect(watched.sameDocument, 'the detail page was not reloaded').toBe(true);
    const seenFinished = new Set(watched.log.map((e) => e.finished));
    expect(seenFinished.size, `finished counts seen: ${JSON.stringify(watched.log)}`).toBeGreaterThanOrEqual(
      2,
    );
    expect(Math.max(...watched.log.map((e) => e.active))).toBeLessThanOrEqual(5);
    const progressText = (await readStats(p))?.progress ?? '';
    expect(progressText).toMatch(/^\d+\/24$/);
    expect(Number(progressText.split('/')[0])).toBeGreaterThanOrEqual(3);

    // 3. 暂停: in-flight calls finish, nothing new is claimed.
    await p.getByRole('button', { name: '暂停', exact: true }).click();
    // The toast (任务已暂停) lands over the header's buttons and stays while the pointer rests on
    // it: move away so it leaves on its own before 继续 is clicked.
    await p.mouse.move(300, 800);
    await expect.poll(() => textOf(stateTag), { timeout: 10_000 }).toBe('已暂停');
    await expect
      .poll(async () => (await readStats(p))?.active, {
        timeout: 30_000,
        interval: 250,
        message: '呼叫中 should reach 0 after the pause',
      })
      .toBe(0);
    const pausedAt = await readStats(p);
    expect(pausedAt!.finished).toBeLessThan(24);
    await sleep(3000);
    const stillPaused = await readStats(p);
    expect(stillPaused!.finished, 'no call finishes (or starts) while paused').toBe(pausedAt!.finished);
    expect(stillPaused!.active).toBe(0);
    const pausedTask = await api.get<TaskDetail>(`/tasks/${encodeURIComponent(taskId)}`);
    expect(pausedTask.state).toBe('paused');
    expect(pausedTask.activeCalls).toBe(0);
    expect(pausedTask.counts.finished).toBe(pausedAt!.finished);
    expect(pausedTask.counts.dialing).toBe(0);

    // 继续: progress resumes.
    await waitForToastsToLeave(p);
    await p.getByRole('button', { name: '继续', exact: true }).click();
    await p.mouse.move(300, 800);
    await expect.poll(() => textOf(stateTag), { timeout: 10_000 }).toBe('进行中');
    await expect
      .poll(async () => (await readStats(p))?.finished, {
        timeout: 30_000,
        interval: 250,
        message: '已完成 should grow again after 继续',
      })
      .toBeGreaterThan(pausedAt!.finished);

    // 5. It finishes: every contact reached a final state, one call each.
    await expect
      .poll(() => textOf(stateTag), { timeout: 90_000, interval: 500, message: 'the task should complete' })
      .toBe('已完成');
    await expect.poll(async () => (await readStats(p))?.finished, { timeout: 10_000 }).toBe(24);
    expect((await readStats(p))?.progress).toBe('24/24');
    const final = await statLog(p);
    expect(final.sameDocument, 'the detail page was not reloaded').toBe(true);
    expect(
      streams.some((url) => new URL(url).searchParams.get('taskId') === taskId),
      `the page followed the task's events: ${streams.join(', ')}`,
    ).toBe(true);
    const done = await api.get<TaskDetail>(`/tasks/${encodeURIComponent(taskId)}`);
    expect(done.state).toBe('completed');
    expect(done.counts.total).toBe(24);
    expect(done.counts.finished).toBe(24);
    expect(done.counts.waiting).toBe(0);
    expect(done.counts.dialing).toBe(0);
    expect(done.counts.calls).toBe(24);
    const byReason = Object.values(done.counts.byEndReason).reduce((sum, n) => sum + (n ?? 0), 0);
    expect(byReason).toBe(24);

    // 4. The calls of the task, one of them, and back.
    await p.getByRole('link', { name: '查看通话记录', exact: true }).click();
    await p.waitForURL(
      (url) => url.pathname === '/call-task/task-detail-list' && url.searchParams.get('taskId') === taskId,
    );
    await expectVisible(
      p.getByText(`任务：${taskName}`, { exact: true }),
      'the task name over its calls',
      15_000,
    );
    const callRows = p.locator('.ant-table-tbody tr[data-row-key]');
    await expect
      .poll(() => textOf(p.locator('.ant-pagination-total-text')), { timeout: 15_000 })
      .toBe('共 24 条');
    const keys = await callRows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-row-key') ?? ''));
    expect(keys.length).toBeGreaterThan(0);
    // Each row is a call to one of the imported numbers (the 被叫 column, with the contact's name).
    const numbers = new Set(goodNumbers);
    for (let i = 0; i < keys.length; i++) {
      const callee = await textOf(callRows.nth(i).locator('td').nth(2));
      const match = /^(1\d{10}) ?(.*)$/.exec(callee);
      expect(match && numbers.has(match[1]!), `a call to ${callee}`).toBe(true);
      expect(match?.[2]).toBe(`客户${goodNumbers.indexOf(match![1]!) + 1}`);
    }
    const openedKey = keys[1] ?? keys[0]!;
    await callRows.nth(keys.indexOf(openedKey)).getByRole('link', { name: '详情', exact: true }).click();
    await p.waitForURL((url) => url.pathname === `/call-record/detail/${encodeURIComponent(openedKey)}`);
    const facts = p.getByRole('region', { name: '通话信息' });
    await expectVisible(facts, 'the call facts', 15_000);
    expect(await textOf(facts)).toContain(`任务${taskName}`);
    expect(await textOf(facts)).toContain(`小助手${DEMO_ASSISTANT}`);

    await p.getByRole('button', { name: '返回', exact: true }).click();
    await p.waitForURL(
      (url) => url.pathname === '/call-task/task-detail-list' && url.searchParams.get('taskId') === taskId,
      { timeout: 15_000 },
    );
    await expect
      .poll(() => textOf(p.locator('.ant-pagination-total-text')), { timeout: 15_000 })
      .toBe('共 24 条');
    expect(await textOf(p.getByText(`任务：${taskName}`, { exact: true }))).toBe(`任务：${taskName}`);
  }, 240_000);
});

/** The index of a Descriptions item by its label. */
async function labelIndex(descriptions: Locator, label: string): Promise<number> {
  const labels = await descriptions.locator('.ant-descriptions-item-label').allTextContents();
  const index = labels.map((l) => l.trim()).indexOf(label);
  if (index < 0) throw new Error(`no ${label} in the preflight: ${labels.join(', ')}`);
  return index;
}
