import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useQueryCacheStore } from '@/stores/query-cache-store';
import { ok } from '@/test/fake-server';
import { makeCall, makeDetail, paged, renderCallTask, serveApi, signIn, TASKS } from './call-task-fixtures';

let server: ReturnType<typeof serveApi> | undefined;

beforeEach(signIn);
afterEach(() => {
  server?.stop();
  server = undefined;
});

const CALLS = '/api/project/p1/calls';
const lastCallParams = () =>
  server?.requests.filter((request) => request.url === CALLS).at(-1)?.config.params as Record<
    string,
    unknown
  >;

describe('calls of a task', () => {
  it('lists the task’s calls with the record filters, keeps them in the URL and links to the call', async () => {
    server = serveApi({
      [`GET ${TASKS}/t1`]: ok(makeDetail()),
      [`GET ${CALLS}`]: (request) =>
        ok(
          paged(
            [
              makeCall({ id: 'c7' }),
              makeCall({
                id: 'c8',
                calleeNumber: '13900000008',
                contactName: null,
                endReason: 'busy',
                talkSeconds: 0,
                intentGrade: null,
              }),
            ],
            30,
            Number(request.config.params.page),
          ),
        ),
    });
    const router = renderCallTask('/call-task/task-detail-list?taskId=t1');
    expect(await screen.findByText('任务：3 月课程回访')).toBeTruthy();
    expect(await screen.findByText('共 30 条')).toBeTruthy();
    expect(lastCallParams()).toEqual({ taskId: 't1', page: 1, pageSize: 20 });
    const busy = screen.getByText('13900000008').closest('tr') as HTMLElement;
    expect(within(busy).getByText('忙线')).toBeTruthy();
    expect(within(busy).getByText('00:00')).toBeTruthy();
    expect(
      within(screen.getByText('张三').closest('tr') as HTMLElement).getByText('A 有明确意向'),
    ).toBeTruthy();

    fireEvent.mouseDown(screen.getByLabelText('结束原因'));
    fireEvent.click(await screen.findByTitle('未接听'));
    fireEvent.change(screen.getByLabelText('号码'), { target: { value: '139' } });
    fireEvent.change(screen.getByLabelText('最短通话时长'), { target: { value: '10' } });
    fireEvent.click(screen.getByRole('button', { name: '查询' }));
    await waitFor(() =>
      expect(lastCallParams()).toMatchObject({
        taskId: 't1',
        endReason: 'no_answer',
        number: '139',
        talkMin: '10',
        page: 1,
      }),
    );
    fireEvent.click(screen.getByTitle('2'));
    await waitFor(() => expect(lastCallParams()).toMatchObject({ page: 2, number: '139' }));
    expect(router.state.location.search).toBe('?taskId=t1&endReason=no_answer&number=139&talkMin=10&page=2');

    const details = screen.getAllByRole('link', { name: '详情' });
    expect(details.map((link) => link.getAttribute('href'))).toEqual([
      '/call-record/detail/c7',
      '/call-record/detail/c8',
    ]);
    fireEvent.click(details[0] as HTMLElement);
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/detail/c7'));
    expect(useQueryCacheStore.getState().callDetailBackUrl).toBe(
      '/call-task/task-detail-list?taskId=t1&endReason=no_answer&number=139&talkMin=10&page=2',
    );

    // Coming back to the stored URL shows the same filtered page.
    await router.navigate(useQueryCacheStore.getState().callDetailBackUrl ?? '');
    await waitFor(() =>
      expect(lastCallParams()).toMatchObject({ page: 2, number: '139', endReason: 'no_answer' }),
    );
    expect((await screen.findByLabelText<HTMLInputElement>('号码')).value).toBe('139');
  });
});
