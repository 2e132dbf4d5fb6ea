import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ok } from '@/test/fake-server';
import { renderApp } from '@/test/render-route';
import {
  clickChartAt,
  clickChartItem,
  makeAssistantReport,
  makeNumberHealth,
  REPORTS,
  serveReports,
} from './data-report-fixtures';

let server: ReturnType<typeof serveReports> | undefined;
afterEach(() => {
  server?.stop();
  server = undefined;
});

describe('小助手统计', () => {
  it('lists assistants expandable to versions, grading agreement, and warns about a number to rest', async () => {
    server = serveReports({
      [`GET ${REPORTS}/assistant`]: ok(makeAssistantReport()),
      [`GET ${REPORTS}/numbers`]: ok(makeNumberHealth()),
    });
    renderApp('/data-report/assistant?from=2026-11-18&to=2026-11-24');

    const table = await screen.findByRole('table', { name: '小助手统计' }, { timeout: 15_000 });
    expect(within(table).getByRole('link', { name: '40' }).getAttribute('href')).toBe(
      '/call-record/list?assistantId=a1',
    );
    expect(within(table).queryByText('版本 2')).toBeNull();
    fireEvent.click(within(table).getByRole('button', { name: /展开/ }));
    expect(await within(table).findByText('版本 2')).toBeTruthy();

    const grading = screen.getByRole('table', { name: '评级一致性' });
    expect(within(grading).getByText('80.0%')).toBeTruthy();
    expect(within(grading).getByRole('link', { name: '10' }).getAttribute('href')).toBe(
      '/call-record/list?assistantId=a1&humanGraded=yes',
    );

    expect(await screen.findByText(/02100000009 接通率明显下降.*建议暂停使用该号码（休息）/)).toBeTruthy();
    expect(screen.getByRole('table', { name: '外显号码健康度' })).toBeTruthy();
  });

  it('opens the calls of a grade from its stacked bar, and of a day from the one assistant’s trend', async () => {
    server = serveReports({
      [`GET ${REPORTS}/assistant`]: ok(makeAssistantReport()),
      [`GET ${REPORTS}/numbers`]: ok(makeNumberHealth()),
    });
    const router = renderApp('/data-report/assistant?from=2026-11-18&to=2026-11-24');
    const grades = await screen.findByRole('img', { name: '意向等级分布图' }, { timeout: 15_000 });

    // Series 2 of the stack is grade C; category 0 the first assistant.
    clickChartItem(grades, 2, 0);
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/list'));
    expect(new URLSearchParams(router.state.location.search).get('intentGrade')).toBe('C');
    expect(new URLSearchParams(router.state.location.search).get('assistantId')).toBe('a1');

    await act(() => router.navigate(-1));
    clickChartAt(await screen.findByRole('img', { name: '小助手通话趋势图' }), 0, 20);
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/list'));
    expect(Object.fromEntries(new URLSearchParams(router.state.location.search))).toMatchObject({
      assistantId: 'a1',
      answered: 'yes',
      from: '2026-11-17T16:00:00.000Z',
      to: '2026-11-18T15:59:59.999Z',
    });

    // A funnel step: the calls the caller hung up after that many turns.
    await act(() => router.navigate(-1));
    clickChartItem(await screen.findByRole('img', { name: '挂断漏斗图' }), 0, 1);
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/list'));
    expect(Object.fromEntries(new URLSearchParams(router.state.location.search))).toMatchObject({
      hangupBy: 'callee',
      turnsMin: '2',
      turnsMax: '2',
    });
  });

  it('says what to do before any assistant has called', async () => {
    server = serveReports({
      [`GET ${REPORTS}/assistant`]: ok({ ...makeAssistantReport(), rows: [], grading: [] }),
      [`GET ${REPORTS}/numbers`]: ok({ rows: [] }),
    });
    renderApp('/data-report/assistant');

    expect(await screen.findByText(/还没有小助手通话/, undefined, { timeout: 15_000 })).toBeTruthy();
    expect(await screen.findByText(/所选时间段内没有外呼/)).toBeTruthy();
  });
  it('rests the warned number from the warning, then shows it resting without the advice', async () => {
    let health = makeNumberHealth();
    server = serveReports({
      [`GET ${REPORTS}/assistant`]: ok(makeAssistantReport()),
      [`GET ${REPORTS}/numbers`]: () => ok(health),
      'PUT /api/project/p1/numbers/02100000009': (request) => {
        const { resting } = request.body as { resting: boolean };
        health = {
          rows: health.rows.map((row) =>
            row.number === '02100000009'
              ? { ...row, restingSince: resting ? '2026-11-24T02:00:00.000Z' : null }
              : row,
          ),
        };
        return ok({ number: '02100000009', restingSince: health.rows[0]?.restingSince ?? null });
      },
    });
    renderApp('/data-report/assistant?from=2026-11-18&to=2026-11-24');
    const warning = (await screen.findByText(/02100000009 接通率明显下降/, {}, { timeout: 15_000 })).closest(
      '.ant-alert',
    ) as HTMLElement;
    fireEvent.click(within(warning).getByRole('button', { name: '休息 02100000009' }));
    const table = screen.getByRole('table', { name: '外显号码健康度' });
    expect(await within(table).findByText(/休息中 · 自 11-24/)).toBeTruthy();
    expect(server.requests.find((request) => request.method === 'PUT')?.body).toEqual({ resting: true });
    expect(screen.queryByText(/02100000009 接通率明显下降/)).toBeNull();
    expect(within(table).getByRole('button', { name: '恢复 02100000009' })).toBeTruthy();
  });
});
