import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useQueryCacheStore } from '@/stores/query-cache-store';
import { useUserStore } from '@/stores/user-store';
import { ok } from '@/test/fake-server';
import {
  emptyTaskCounts,
  makeAssistant,
  makeDetail,
  makeTask,
  openLimits,
  paged,
  renderCallTask,
  serveApi,
  signIn,
  TASKS,
} from './call-task-fixtures';

let server: ReturnType<typeof serveApi> | undefined;

beforeEach(signIn);
afterEach(() => {
  server?.stop();
  server = undefined;
});

const common = {
  'GET /api/project/p1/balance-limit': ok(openLimits),
  'GET /api/project/p1/assistants': ok(
    paged([makeAssistant(), makeAssistant({ id: 'a2', name: '催缴小助手' })]),
  ),
};

const row = (text: string) => screen.getByText(text).closest('tr') as HTMLElement;
const listRequests = () => server?.requests.filter((request) => request.url === TASKS) ?? [];
const lastListParams = () => listRequests().at(-1)?.config.params as Record<string, unknown>;

describe('call task list', () => {
  it('hides 新建任务 and the row actions from a read-only member, keeping 详情', async () => {
    useUserStore
      .getState()
      .setUserInfo({ ...useUserStore.getState().userInfo, isOwnerOrAdmin: false, role: 'readonly' });
    server = serveApi({
      ...common,
      [`GET ${TASKS}`]: ok(
        paged([makeTask(), makeTask({ id: 't2', name: '新学员邀约', state: 'draft' })], 2),
      ),
    });
    renderCallTask('/call-task/list');

    expect(await screen.findByText('新学员邀约')).toBeTruthy();
    expect(screen.queryByRole('button', { name: '新建任务' })).toBeNull();
    for (const name of ['开始', '暂停', '停止', '删除', '复制', '编辑']) {
      expect(screen.queryByRole('button', { name })).toBeNull();
    }
    expect(within(row('新学员邀约')).getByText('详情')).toBeTruthy();
  });

  it('shows each task with its progress, rates and the actions its state allows', async () => {
    server = serveApi({
      ...common,
      [`GET ${TASKS}`]: ok(
        paged(
          [
            makeTask(),
            makeTask({ id: 't2', name: '新学员邀约', state: 'draft', counts: emptyTaskCounts, progress: 0 }),
            makeTask({ id: 't3', name: '续费提醒', state: 'paused' }),
            makeTask({ id: 't4', name: '老学员回访', state: 'completed', progress: 1 }),
          ],
          36,
        ),
      ),
    });
    renderCallTask('/call-task/list');

    expect(await screen.findByText('3 月课程回访')).toBeTruthy();
    expect(screen.getByText('共 36 条')).toBeTruthy();
    const running = row('3 月课程回访');
    expect(within(running).getByText('进行中')).toBeTruthy();
    expect(within(running).getByText('v2')).toBeTruthy();
    expect(within(running).getByText('77/200')).toBeTruthy();
    // 40 answered of 100 calls; A+B are 25 of 40 graded.
    expect(within(running).getByText('40%')).toBeTruthy();
    expect(within(running).getByText('62.5%')).toBeTruthy();
    expect(within(running).getByRole('button', { name: '暂停' })).toBeTruthy();
    expect(within(running).getByRole('button', { name: '停止' })).toBeTruthy();
    expect(within(running).queryByRole('button', { name: '开始' })).toBeNull();
    expect(within(running).queryByRole('button', { name: '删除' })).toBeNull();

    const draft = row('新学员邀约');
    expect(within(draft).getByText('草稿')).toBeTruthy();
    expect(within(draft).getByText('0/0')).toBeTruthy();
    expect(within(draft).getAllByText('-')).toHaveLength(2);
    expect(within(draft).getByRole('button', { name: '开始' })).toBeTruthy();
    expect(within(draft).getByRole('button', { name: '删除' })).toBeTruthy();

    expect(within(row('续费提醒')).getByRole('button', { name: '继续' })).toBeTruthy();
    const done = row('老学员回访');
    expect(within(done).queryByRole('button', { name: /暂停|继续|停止|开始/ })).toBeNull();
    expect(within(done).getByRole('button', { name: '复制' })).toBeTruthy();
    expect(screen.getByRole('button', { name: '新建任务' }).hasAttribute('disabled')).toBe(false);
  });

  it('sends the filters and the page to the server', async () => {
    server = serveApi({
      ...common,
      [`GET ${TASKS}`]: (request) =>
        ok(
          paged(
            [makeTask({ id: `t${String(request.config.params.page)}` })],
            45,
            Number(request.config.params.page),
          ),
        ),
    });
    renderCallTask('/call-task/list');
    await screen.findByText('共 45 条');

    fireEvent.change(screen.getByLabelText('名称'), { target: { value: '回访' } });
    fireEvent.mouseDown(screen.getByLabelText('状态'));
    fireEvent.click(await screen.findByTitle('已暂停'));
    fireEvent.mouseDown(screen.getByLabelText('小助手'));
    fireEvent.click(await screen.findByTitle('催缴小助手'));
    fireEvent.click(screen.getByRole('button', { name: '查询' }));
    await waitFor(() =>
      expect(lastListParams()).toMatchObject({ name: '回访', state: 'paused', assistantId: 'a2', page: 1 }),
    );

    fireEvent.click(screen.getByTitle('3'));
    await waitFor(() => expect(lastListParams()).toMatchObject({ page: 3, state: 'paused' }));

    fireEvent.click(screen.getByRole('button', { name: '重置' }));
    await waitFor(() => expect(lastListParams()).toEqual({ page: 1, pageSize: 20 }));
  });

  it('pauses at once and stops only after confirmation', async () => {
    let state: 'running' | 'paused' | 'stopped' = 'running';
    server = serveApi({
      ...common,
      [`GET ${TASKS}`]: () => ok(paged([makeTask({ state })])),
      [`POST ${TASKS}/t1/actions/pause`]: () => {
        state = 'paused';
        return ok(makeDetail({ state }));
      },
      [`POST ${TASKS}/t1/actions/stop`]: () => {
        state = 'stopped';
        return ok(makeDetail({ state }));
      },
    });
    renderCallTask('/call-task/list');
    fireEvent.click(await within(await screen.findByRole('table')).findByRole('button', { name: '暂停' }));
    expect(await screen.findByText('任务已暂停')).toBeTruthy();
    expect(await within(row('3 月课程回访')).findByText('已暂停')).toBeTruthy();

    fireEvent.click(within(row('3 月课程回访')).getByRole('button', { name: '停止' }));
    expect(await screen.findByText('确定停止该任务？')).toBeTruthy();
    expect(server.requests.some((request) => request.url.endsWith('/actions/stop'))).toBe(false);
    const popup = screen.getByText('确定停止该任务？').closest('.ant-popover') as HTMLElement;
    fireEvent.click(within(popup).getByRole('button', { name: '停止' }));
    expect(await within(row('3 月课程回访')).findByText('已停止')).toBeTruthy();
  });

  it('restores its filters and page when coming back from a task', async () => {
    server = serveApi({
      ...common,
      [`GET ${TASKS}`]: (request) =>
        ok(
          paged(
            [makeTask({ id: `t${String(request.config.params.page)}` })],
            45,
            Number(request.config.params.page),
          ),
        ),
      [`GET ${TASKS}/t2`]: ok(makeDetail({ id: 't2' })),
      [`GET ${TASKS}/t2/contacts`]: ok(paged([])),
      'GET /api/project/p1/assistants/a1/versions': ok([]),
    });
    const router = renderCallTask('/call-task/list');
    await screen.findByText('共 45 条');
    fireEvent.change(screen.getByLabelText('名称'), { target: { value: '回访' } });
    fireEvent.click(screen.getByRole('button', { name: '查询' }));
    await waitFor(() => expect(lastListParams()).toMatchObject({ name: '回访' }));
    fireEvent.click(screen.getByTitle('2'));
    await waitFor(() => expect(lastListParams()).toMatchObject({ page: 2 }));

    const row = (await screen.findByRole('link', { name: '详情' })).closest('tr') as HTMLElement;
    expect(within(row).getByRole('link', { name: '3 月课程回访' }).getAttribute('href')).toBe(
      '/call-task/task-detail/t2',
    );
    expect(within(row).getByRole('link', { name: '通话记录' }).getAttribute('href')).toBe(
      '/call-task/task-detail-list?taskId=t2',
    );
    fireEvent.click(within(row).getByRole('link', { name: '详情' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-task/task-detail/t2'));
    expect(JSON.parse(useQueryCacheStore.getState().callTaskQueryCache ?? '{}')).toMatchObject({
      filters: { name: '回访' },
      page: 2,
    });

    fireEvent.click(await screen.findByRole('link', { name: '← 返回任务列表' }));
    await waitFor(() => expect(router.state.location.search).toBe('?back=1'));
    await waitFor(() => expect(lastListParams()).toMatchObject({ name: '回访', page: 2 }));
    expect((screen.getByLabelText('名称') as HTMLInputElement).value).toBe('回访');
  });

  it('disables 新建任务 with the alert when outbound calling is not open', async () => {
    server = serveApi({
      ...common,
      'GET /api/project/p1/balance-limit': ok({ ...openLimits, hasBalance: true, concurrentCallout: 0 }),
      [`GET ${TASKS}`]: ok(paged([])),
    });
    renderCallTask('/call-task/list');
    expect(await screen.findByText('该功能未开通，请联系销售开通')).toBeTruthy();
    expect(screen.getByRole('button', { name: '新建任务' }).hasAttribute('disabled')).toBe(true);
    expect(await screen.findByText('暂无呼出任务')).toBeTruthy();
  });
});
