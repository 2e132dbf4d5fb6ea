import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ok } from '@/test/fake-server';
import { renderApp } from '@/test/render-route';
import {
  ANSWERED_DRILL,
  chinaDay,
  clickChartAt,
  clickChartItem,
  makeCallinReport,
  REPORTS,
  serveReports,
} from './data-report-fixtures';

let server: ReturnType<typeof serveReports> | undefined;
afterEach(() => {
  server?.stop();
  server = undefined;
  vi.restoreAllMocks();
});

const CALLIN = `${REPORTS}/callin`;
const reportParams = () =>
  (server?.requests.filter((request) => request.url === CALLIN) ?? []).map(
    (request) => request.config.params as Record<string, string>,
  );

describe('呼入统计', () => {
  it('asks for the last 7 days by default, and a quick pick changes the URL and the request; back returns', async () => {
    server = serveReports({ [`GET ${CALLIN}`]: ok(makeCallinReport()) });
    const router = renderApp('/data-report/callin');

    // The first test of the file loads the shell and the section's lazy chunks cold.
    expect(await screen.findByText('呼入总量', undefined, { timeout: 15_000 })).toBeTruthy();
    expect(reportParams()[0]).toMatchObject({ from: chinaDay(-6), to: chinaDay(0), granularity: 'auto' });
    const tabs = screen.getByRole('navigation', { name: '数据统计导航' });
    expect(within(tabs).getByRole('link', { name: '呼入统计' }).getAttribute('aria-current')).toBe('page');

    fireEvent.click(screen.getByRole('button', { name: '昨天' }));
    await waitFor(() =>
      expect(reportParams().at(-1)).toMatchObject({ from: chinaDay(-1), to: chinaDay(-1) }),
    );
    const search = new URLSearchParams(router.state.location.search);
    expect(search.get('from')).toBe(chinaDay(-1));
    expect(search.get('to')).toBe(chinaDay(-1));
    // The range carries over to the other reports' tabs.
    expect(within(tabs).getByRole('link', { name: '知识库统计' }).getAttribute('href')).toBe(
      `/data-report/knowledge?from=${chinaDay(-1)}&to=${chinaDay(-1)}`,
    );

    fireEvent.click(screen.getByRole('button', { name: '近 30 天' }));
    await waitFor(() =>
      expect(reportParams().at(-1)).toMatchObject({ from: chinaDay(-29), to: chinaDay(0) }),
    );

    await act(() => router.navigate(-1));
    expect(new URLSearchParams(router.state.location.search).get('from')).toBe(chinaDay(-1));
    expect(screen.getByRole('button', { name: '昨天' }).getAttribute('aria-pressed')).toBe('true');
  });

  it('links each figure and breakdown count to the calls behind it, and shows the change against the previous period', async () => {
    server = serveReports({ [`GET ${CALLIN}`]: ok(makeCallinReport()) });
    const router = renderApp('/data-report/callin?from=2026-11-18&to=2026-11-24');

    const answered = await screen.findByRole('link', { name: '接通量 120，查看通话' }, { timeout: 15_000 });
    expect(answered.getAttribute('href')).toBe(`/call-record/list?${new URLSearchParams(ANSWERED_DRILL)}`);
    // 120 against 100: up 20%, good for answered calls.
    const card = answered.closest('div.rounded-lg') as HTMLElement;
    expect(within(card).getByText('↑20.0%').className).toContain('text-green-600');
    // A longer maximum wait is bad news even though the number went up.
    const wait = screen.getByText('最长等待').closest('div.rounded-lg') as HTMLElement;
    expect(within(wait).getByText('↑50.0%').className).toContain('text-red-600');
    // Nothing the previous period to compare with.
    const assistant = screen.getByText('小助手接待').closest('div.rounded-lg') as HTMLElement;
    expect(within(assistant).getByText('—')).toBeTruthy();

    const byNumber = screen.getByRole('table', { name: '按号码统计' });
    expect(within(byNumber).getByRole('link', { name: '150' }).getAttribute('href')).toBe(
      '/call-record/list?direction=inbound&number=02100000001',
    );
    expect(screen.getAllByRole('img', { name: '来电时段热力图' })).toHaveLength(1);

    fireEvent.click(answered);
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/list'));
    expect(Object.fromEntries(new URLSearchParams(router.state.location.search))).toEqual(ANSWERED_DRILL);
  });

  it('opens the calls behind a chart element: a wait bar, a heat-map cell, a trend point', async () => {
    server = serveReports({ [`GET ${CALLIN}`]: ok(makeCallinReport()) });
    const router = renderApp('/data-report/callin?from=2026-11-18&to=2026-11-24');
    const bars = await screen.findByRole('img', { name: '接听时效分布图' }, { timeout: 15_000 });
    // The list then writes its default sort into the URL; the drill is the rest.
    const listQuery = () => {
      const {
        sort: _sort,
        order: _order,
        ...drill
      } = Object.fromEntries(new URLSearchParams(router.state.location.search));
      return drill;
    };
    const back = async () => {
      await act(() => router.navigate(-1));
      await screen.findByRole('img', { name: '接听时效分布图' });
    };

    clickChartItem(bars, 0, 1);
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/list'));
    expect(listQuery()).toEqual({ direction: 'inbound', waitMin: '3', waitMax: '5' });
    await back();

    // Monday 09:00 China time is one hour of this week.
    const heat = screen.getByRole('img', { name: '来电时段热力图' });
    clickChartItem(heat, 0, 0);
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/list'));
    expect(listQuery()).toEqual({
      direction: 'inbound',
      from: '2026-11-23T01:00:00.000Z',
      to: '2026-11-23T01:59:59.999Z',
    });
    await back();

    // A click in the trend's second column, at the height of the answered line (9).
    clickChartAt(screen.getByRole('img', { name: '呼入趋势图' }), 1, 9);
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/list'));
    expect(listQuery()).toEqual({
      ...ANSWERED_DRILL,
      from: '2026-11-18T02:00:00.000Z',
      to: '2026-11-18T02:59:59.999Z',
    });
  });

  it('exports the report as shown in CSV and in Excel', async () => {
    server = serveReports({
      [`GET ${CALLIN}`]: ok(makeCallinReport()),
      [`GET ${CALLIN}/export`]: { status: 200, body: 'number,offered\n' },
    });
    Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:report'), revokeObjectURL: vi.fn() });
    const saved: string[] = [];
    vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      saved.push(this.download);
    });
    renderApp('/data-report/callin?from=2026-11-01&to=2026-11-30&lineNumber=02100000001');
    await screen.findByText('呼入总量', undefined, { timeout: 15_000 });

    fireEvent.click(screen.getByRole('button', { name: '导出 CSV' }));
    await waitFor(() => expect(saved).toEqual(['呼入统计-2026-11-01-2026-11-30.csv']));
    fireEvent.click(screen.getByRole('button', { name: '导出 Excel' }));
    await waitFor(() => expect(saved).toHaveLength(2));
    const exports = server.requests.filter((request) => request.url === `${CALLIN}/export`);
    expect(exports.map((request) => request.config.params)).toEqual([
      { from: '2026-11-01', to: '2026-11-30', granularity: 'auto', lineNumber: '02100000001', format: 'csv' },
      {
        from: '2026-11-01',
        to: '2026-11-30',
        granularity: 'auto',
        lineNumber: '02100000001',
        format: 'xlsx',
      },
    ]);
  });

  it('says what to do when no call came in', async () => {
    server = serveReports({ [`GET ${CALLIN}`]: ok(makeCallinReport(0)) });
    renderApp('/data-report/callin');

    expect(
      await screen.findByText(/还没有呼入电话：为号码绑定呼入流程或小助手后，这里会显示接听情况/, undefined, {
        timeout: 15_000,
      }),
    ).toBeTruthy();
    expect(screen.getByRole('link', { name: '去号码管理' }).getAttribute('href')).toBe('/ivr/numbers');
    expect(screen.queryByRole('table', { name: '按号码统计' })).toBeNull();
  });

  it('shows what is wrong with a malformed or too long range instead of asking for it', async () => {
    server = serveReports({ [`GET ${CALLIN}`]: ok(makeCallinReport()) });
    const router = renderApp('/data-report/callin?from=2026-13-01&to=2026-11-30');

    expect(await screen.findByText('开始日期须为 YYYY-MM-DD', undefined, { timeout: 15_000 })).toBeTruthy();
    await act(() => router.navigate('/data-report/callin?from=2024-01-01&to=2026-11-30'));
    expect(await screen.findByText('日期范围不能超过 366 天')).toBeTruthy();
    expect(reportParams()).toEqual([]);

    // A quick pick puts things right.
    fireEvent.click(screen.getByRole('button', { name: '今天' }));
    await waitFor(() => expect(reportParams()).toHaveLength(1));
    expect(await screen.findByText('呼入总量')).toBeTruthy();
  });

  const pickRange = (from: string, to: string) => {
    const [start, end] = screen.getAllByPlaceholderText(/日期/) as HTMLElement[];
    for (const [input, value] of [
      [start, from],
      [end, to],
    ] as const) {
      fireEvent.mouseDown(input as HTMLElement);
      fireEvent.click(input as HTMLElement);
      fireEvent.change(input as HTMLElement, { target: { value } });
      fireEvent.keyDown(input as HTMLElement, { key: 'Enter' });
    }
  };

  it('takes a custom range from the picker into the URL and the request', async () => {
    server = serveReports({ [`GET ${CALLIN}`]: ok(makeCallinReport()) });
    const router = renderApp('/data-report/callin?from=2026-11-18&to=2026-11-24');
    await screen.findByText('呼入总量', undefined, { timeout: 15_000 });

    pickRange('2026-10-01', '2026-10-15');
    await waitFor(() =>
      expect(reportParams().at(-1)).toMatchObject({ from: '2026-10-01', to: '2026-10-15' }),
    );
    expect(new URLSearchParams(router.state.location.search).get('to')).toBe('2026-10-15');
  });

  it('refuses a custom range longer than a year with a message, asking nothing', async () => {
    server = serveReports({ [`GET ${CALLIN}`]: ok(makeCallinReport()) });
    const router = renderApp('/data-report/callin?from=2026-11-18&to=2026-11-24');
    await screen.findByText('呼入总量', undefined, { timeout: 15_000 });

    pickRange('2024-01-01', '2025-06-30');
    expect(await screen.findByText('日期范围不能超过 366 天')).toBeTruthy();
    expect(reportParams()).toHaveLength(1);
    expect(new URLSearchParams(router.state.location.search).get('from')).toBe('2026-11-18');
  });
});
