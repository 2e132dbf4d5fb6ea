import type { CallList, DashboardSummary, ReportDrill } from '@callpilot/contracts';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { expectVisible, openLoggedIn, textOf } from '../support/console';
import { demoSettled, openProjectApi, type ProjectApi } from '../support/project-api';

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let api: ProjectApi;

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

async function listTotal(drill: ReportDrill): Promise<number> {
  return (await api.get<CallList>(`/calls?${new URLSearchParams({ ...drill, pageSize: '1' })}`)).total;
}

/**
 * The home page's figures once the rollups have caught up with the calls (a worker rebuilds them
 * a couple of seconds after calls end): the last 7 days count what their own drill lists.
 */
async function settledDashboard(): Promise<DashboardSummary> {
  let summary: DashboardSummary | undefined;
  await expect
    .poll(
      async () => {
        summary = await api.get<DashboardSummary>('/dashboard');
        const drill = summary.last7Days.drill;
        return (
          drill !== null &&
          summary.last7Days.calls > 0 &&
          (await listTotal(drill)) === summary.last7Days.calls
        );
      },
      { timeout: 30_000, interval: 1000, message: 'the home page should count the listed calls' },
    )
    .toBe(true);
  return summary as DashboardSummary;
}

describe('首页', () => {
  it('tells the day from the rollups and opens the calls behind the week’s count and a day of the trend', async () => {
    const summary = await settledDashboard();
    ({ context } = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword')));
    const p = context.pages()[0]!;
    const week = p.getByRole('region', { name: '近 7 日' });
    await expectVisible(week, 'the week card');
    const weekLink = week.getByRole('link', { name: /^近 7 日通话数 [\d,]+，查看通话记录$/ });
    await expectVisible(weekLink, 'the week’s count');
    expect(await textOf(weekLink)).toBe(summary.last7Days.calls.toLocaleString('zh-CN'));
    // Today compares itself with yesterday and the week at the same time of day.
    const today = p.getByRole('region', { name: '今日' });
    expect(await textOf(today)).toContain('较昨日同时段');
    expect(await textOf(today)).toContain('较近 7 日同时段均值');
    await expectVisible(p.getByRole('region', { name: '余额与并发' }), 'the limits');

    await weekLink.click();
    await p.waitForURL((url) => url.pathname === '/call-record/list');
    const chips = p.getByRole('region', { name: '报表筛选条件' });
    await expectVisible(chips, 'the drill-down chips');
    expect(await textOf(chips)).toContain('状态：已结束');
    await expect
      .poll(() => textOf(p.locator('.ant-pagination-total-text')), { timeout: 15_000 })
      .toBe(`共 ${summary.last7Days.calls} 条`);

    // The 14-day bars: the busiest day's bar opens that China day's calls.
    await p.goBack();
    await p.waitForURL((url) => url.pathname === '/dashboard');
    const trend = p.getByRole('region', { name: '通话趋势' });
    await expectVisible(trend, 'the trend');
    await trend.getByText('近 14 天').click();
    const chart = trend.getByRole('img', { name: /近 14 天每日通话数/ });
    await expectVisible(chart, 'the 14-day chart');
    const days = summary.trend.days;
    const busiest = days.reduce((best, d, i) => (d.calls > (days[best]?.calls ?? 0) ? i : best), 0);
    const box = await chart.boundingBox();
    if (!box) throw new Error('the chart is not on screen');
    // Grid: 40 px left, 16 right, 24 bottom; the 通话数 bar is the left one of each day's pair.
    const plot = box.width - 40 - 16;
    // The bars grow in over a second after the switch: click again until one has grown under the pointer.
    await expect
      .poll(
        async () => {
          if (new URL(p.url()).pathname !== '/call-record/list')
            await p.mouse.click(box.x + 40 + ((busiest + 0.3) * plot) / days.length, box.y + 240 - 24 - 3);
          return new URL(p.url()).pathname;
        },
        { timeout: 10_000, interval: 500, message: 'a click on the bar should open its calls' },
      )
      .toBe('/call-record/list');
    const search = new URL(p.url()).searchParams;
    const day = days[busiest]!;
    for (const [key, value] of Object.entries(day.drill)) expect(search.get(key)).toBe(value);
    await expect
      .poll(() => textOf(p.locator('.ant-pagination-total-text')), { timeout: 15_000 })
      .toBe(`共 ${await listTotal(day.drill)} 条`);
  }, 120_000);
});
