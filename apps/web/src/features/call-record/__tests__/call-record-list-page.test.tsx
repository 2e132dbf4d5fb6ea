import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useQueryCacheStore } from '@/stores/query-cache-store';
import { sseChunks } from '@/test/fake-fetch';
import { ok } from '@/test/fake-server';
import {
  CALLS,
  gate,
  makeCall,
  makeDetail,
  paged,
  renderCallRecord,
  serveCalls,
  serveEvents,
  signIn,
} from './call-record-fixtures';

let server: ReturnType<typeof serveCalls> | undefined;

beforeEach(() => {
  signIn();
  useQueryCacheStore.setState({
    callRecordQueryCache: null,
    callTaskQueryCache: null,
    callDetailBackUrl: null,
  });
});
afterEach(() => {
  server?.stop();
  server = undefined;
});

const common = {
  [`GET ${CALLS}/tags`]: ok(['高意向', '回访']),
  'GET /api/project/p1/assistants': ok(paged([{ id: 'a1', name: '课程回访小助手' }])),
};

const row = (text: string) => screen.getByText(text).closest('tr') as HTMLElement;
const listRequests = () => server?.requests.filter((request) => request.url === CALLS) ?? [];
const lastListParams = () => listRequests().at(-1)?.config.params as Record<string, unknown>;

describe('call record list', () => {
  it('shows the server page with its total, formatted cells and the live badge', async () => {
    serveEvents(() => ({ status: 200, chunks: [gate().promise] }));
    server = serveCalls({
      ...common,
      [`GET ${CALLS}`]: ok(
        paged(
          [
            makeCall({ humanGrade: 'A', tags: ['高意向'] }),
            makeCall({
              id: 'c2',
              calleeNumber: '13900000002',
              status: 'in_progress',
              endReason: null,
              talkSeconds: 0,
              intentGrade: null,
              machineGrade: null,
            }),
          ],
          45,
        ),
      ),
    });
    renderCallRecord('/call-record/list');

    expect(await screen.findByText('13800000001')).toBeTruthy();
    expect(screen.getByText('共 45 条')).toBeTruthy();
    const ended = row('13800000001');
    expect(within(ended).getByText('02:05')).toBeTruthy();
    expect(within(ended).getByText('正常结束')).toBeTruthy();
    expect(within(ended).getByText('A 有明确意向')).toBeTruthy();
    expect(within(ended).getByText('人工')).toBeTruthy();
    expect(within(ended).getByText('高意向')).toBeTruthy();
    expect(within(row('13900000002')).getByText('通话中')).toBeTruthy();
    expect(within(ended).queryByText('通话中')).toBeNull();

    const params = lastListParams();
    expect(params).toMatchObject({ page: 1, pageSize: 20, sort: 'startedAt', order: 'desc' });
    // The default range is the last 7 days, through the end of today.
    const days = (Date.parse(String(params.to)) - Date.parse(String(params.from))) / 86_400_000;
    expect(Math.round(days)).toBe(7);
  });

  it('sends the filters, the page and the sort to the server', async () => {
    serveEvents(() => ({ status: 200, chunks: [gate().promise] }));
    server = serveCalls({
      ...common,
      [`GET ${CALLS}`]: (request) =>
        ok(
          paged(
            [makeCall({ id: `c${String(request.config.params.page)}` })],
            45,
            Number(request.config.params.page),
          ),
        ),
    });
    renderCallRecord('/call-record/list');
    await screen.findByText('共 45 条');

    fireEvent.mouseDown(screen.getByLabelText('方向'));
    fireEvent.click(await screen.findByTitle('呼入'));
    fireEvent.mouseDown(screen.getByLabelText('意向等级'));
    fireEvent.click(await screen.findByTitle('B 可能有意向'));
    fireEvent.click(await screen.findByTitle('无'));
    fireEvent.change(screen.getByLabelText('号码'), { target: { value: '1380' } });
    fireEvent.change(screen.getByLabelText('最短通话时长'), { target: { value: '10' } });
    fireEvent.change(screen.getByLabelText('最长通话时长'), { target: { value: '300' } });
    fireEvent.click(screen.getByRole('button', { name: '查询' }));

    await waitFor(() =>
      expect(lastListParams()).toMatchObject({
        direction: 'inbound',
        intentGrade: 'B,none',
        number: '1380',
        talkMin: '10',
        talkMax: '300',
        page: 1,
      }),
    );

    fireEvent.click(screen.getByTitle('3'));
    await waitFor(() => expect(lastListParams()).toMatchObject({ page: 3, direction: 'inbound' }));

    fireEvent.click(screen.getByRole('columnheader', { name: /通话时长/ }));
    await waitFor(() => expect(lastListParams()).toMatchObject({ sort: 'talkSeconds', page: 1 }));

    fireEvent.click(screen.getByRole('button', { name: '重置' }));
    await waitFor(() => expect(lastListParams().direction).toBeUndefined());
    expect(lastListParams().number).toBeUndefined();
  });

  it('refreshes when a call ends, so 通话中 turns into its result', async () => {
    const release = gate();
    const ended = makeCall({ id: 'c2', calleeNumber: '13900000002', endReason: 'busy', talkSeconds: 0 });
    serveEvents(() => ({
      status: 200,
      chunks: [release.promise, ...sseChunks([{ type: 'ended', call: ended }]), gate().promise],
    }));
    let live = true;
    server = serveCalls({
      ...common,
      [`GET ${CALLS}`]: () =>
        ok(
          paged([
            live
              ? makeCall({ id: 'c2', calleeNumber: '13900000002', status: 'ringing', endReason: null })
              : ended,
          ]),
        ),
    });
    renderCallRecord('/call-record/list');
    expect(await within(await screen.findByRole('table')).findByText('通话中')).toBeTruthy();

    live = false;
    release.open();

    expect(await screen.findByText('忙线')).toBeTruthy();
    expect(screen.queryByText('通话中')).toBeNull();
  });

  it("opens a report's drill-down link with its filters, shown as chips that clear", async () => {
    serveEvents(() => ({ status: 200, chunks: [gate().promise] }));
    server = serveCalls({ ...common, [`GET ${CALLS}`]: ok(paged([makeCall()], 1)) });
    const from = '2026-11-01T16:00:00.000Z';
    const to = '2026-11-03T15:59:59.999Z';
    renderCallRecord(
      `/call-record/list?from=${from}&to=${to}&direction=inbound&status=ended&answered=yes&waitMin=4&waitMax=5&flowId=f1&bogus=1`,
    );

    expect(await screen.findByText('13800000001')).toBeTruthy();
    expect(lastListParams()).toMatchObject({
      from,
      to,
      direction: 'inbound',
      status: 'ended',
      answered: 'yes',
      waitMin: '4',
      waitMax: '5',
      flowId: 'f1',
    });
    expect(lastListParams()).not.toHaveProperty('bogus');
    const chips = screen.getByLabelText('报表筛选条件');
    expect(within(chips).getByText('已接通：是')).toBeTruthy();
    expect(within(chips).getByText('等待 ≥ 4 秒')).toBeTruthy();
    expect(within(chips).getByText('指定流程')).toBeTruthy();

    fireEvent.click(within(chips).getByRole('button', { name: /清\s*除/ }));
    await waitFor(() => expect(lastListParams()).not.toHaveProperty('answered'));
    expect(lastListParams()).toMatchObject({ from, to, direction: 'inbound' });
    expect(lastListParams()).not.toHaveProperty('waitMin');
    expect(screen.queryByLabelText('报表筛选条件')).toBeNull();
  });

  it('restores its filters and page on back=1 after opening a detail', async () => {
    serveEvents(() => ({ status: 200, chunks: [gate().promise] }));
    server = serveCalls({
      ...common,
      [`GET ${CALLS}`]: (request) =>
        ok(
          paged(
            [makeCall({ id: `c${String(request.config.params.page)}` })],
            45,
            Number(request.config.params.page),
          ),
        ),
      [`GET ${CALLS}/c2`]: ok(makeDetail({ id: 'c2', recording: 'none' })),
      [`GET ${CALLS}/c2/neighbors`]: ok({ previousId: null, nextId: null }),
    });
    const router = renderCallRecord('/call-record/list');
    await screen.findByText('共 45 条');
    fireEvent.change(screen.getByLabelText('号码'), { target: { value: '139' } });
    fireEvent.click(screen.getByRole('button', { name: '查询' }));
    await waitFor(() => expect(lastListParams()).toMatchObject({ number: '139' }));
    fireEvent.click(screen.getByTitle('2'));
    await waitFor(() => expect(lastListParams()).toMatchObject({ page: 2 }));

    const detail = await screen.findByRole('link', { name: '详情' });
    expect(detail.getAttribute('href')).toBe('/call-record/detail/c2');
    fireEvent.click(detail);
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/detail/c2'));
    expect(useQueryCacheStore.getState().callDetailBackUrl).toBe('/call-record/list');

    fireEvent.click(await screen.findByRole('button', { name: '返回' }));
    await waitFor(() => expect(router.state.location.search).toBe('?back=1'));
    await waitFor(() => expect(lastListParams()).toMatchObject({ number: '139', page: 2 }));
    expect((screen.getByLabelText('号码') as HTMLInputElement).value).toBe('139');
    expect(screen.getByTitle('2').className).toContain('active');
  });

  it('opens calls through real links: ctrl- or middle-click leaves this tab on the list', async () => {
    serveEvents(() => ({ status: 200, chunks: [gate().promise] }));
    server = serveCalls({
      ...common,
      [`GET ${CALLS}`]: ok(paged([makeCall(), makeCall({ id: 'c/2', calleeNumber: '13900000002' })], 2)),
    });
    const router = renderCallRecord('/call-record/list');
    await screen.findByText('13900000002');
    const links = screen
      .getAllByRole('row')
      .slice(1)
      .map((tableRow) => within(tableRow).getByRole('link', { name: '详情' }));
    expect(links.map((link) => link.getAttribute('href'))).toEqual([
      '/call-record/detail/c1',
      '/call-record/detail/c%2F2',
    ]);

    // The browser opens these in a new tab; the list stays, and keeps its state for that tab's 返回.
    // (jsdom would load the page into this window instead: after React has seen the click, stop it.)
    const inNewTab = (event: Event) => event.preventDefault();
    document.addEventListener('click', inNewTab);
    fireEvent.click(links[0] as HTMLElement, { ctrlKey: true });
    fireEvent(links[1] as HTMLElement, new MouseEvent('auxclick', { bubbles: true, button: 1 }));
    document.removeEventListener('click', inNewTab);
    expect(router.state.location.pathname).toBe('/call-record/list');
    expect(useQueryCacheStore.getState().callDetailBackUrl).toBe('/call-record/list');
    expect(JSON.parse(useQueryCacheStore.getState().callRecordQueryCache ?? '{}')).toMatchObject({ page: 1 });
  });
});
