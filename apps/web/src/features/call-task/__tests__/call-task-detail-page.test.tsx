import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import dayjs from 'dayjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useQueryCacheStore } from '@/stores/query-cache-store';
import { sseChunks } from '@/test/fake-fetch';
import { ok } from '@/test/fake-server';
import {
  gate,
  makeContact,
  makeDetail,
  makePreview,
  makeTask,
  makeVersion,
  openLimits,
  paged,
  renderCallTask,
  serveApi,
  serveTaskEvents,
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
  'GET /api/project/p1/assistants/a1/versions': ok([makeVersion(2, ['课程'])]),
};

const stat = (label: string) =>
  (within(screen.getByLabelText('任务统计')).getByText(label).nextElementSibling as HTMLElement).textContent;
const gradeRow = (grade: string) =>
  within(screen.getByLabelText('意向分布'))
    .getByText(new RegExp(`^${grade} `))
    .closest('li')?.textContent;
const contactRequests = () =>
  server?.requests.filter((request) => request.url === `${TASKS}/t1/contacts`) ?? [];

describe('call task detail', () => {
  it('updates its counts live from the task events and refreshes the contacts', async () => {
    const release = gate();
    const events = serveTaskEvents(() => ({
      status: 200,
      chunks: [
        release.promise,
        ...sseChunks([
          {
            type: 'task',
            task: {
              ...makeTask({
                counts: {
                  ...makeTask().counts,
                  finished: 120,
                  answered: 60,
                  calls: 150,
                  byEndReason: { completed: 50, no_answer: 70 },
                  byGrade: { A: 20, B: 10 },
                },
                progress: 0.6,
              }),
              activeCalls: 5,
            },
          },
        ]),
        gate().promise,
      ],
    }));
    server = serveApi({
      ...common,
      [`GET ${TASKS}/t1`]: ok(makeDetail()),
      [`GET ${TASKS}/t1/contacts`]: ok(paged([makeContact()])),
    });
    renderCallTask('/call-task/task-detail/t1');

    expect(await screen.findByRole('heading', { name: '3 月课程回访' })).toBeTruthy();
    expect(stat('联系人')).toBe('200');
    expect(stat('已完成')).toBe('77');
    expect(stat('呼叫中')).toBe('3');
    expect(stat('接通率')).toBe('40%');
    expect(stat('预计剩余时间')).toBe('1 小时 30 分钟');
    expect(screen.getByText('77/200')).toBeTruthy();
    expect(within(screen.getByLabelText('结果分布')).getByText('未接听 50')).toBeTruthy();
    expect(gradeRow('A')).toContain('10（25%）');
    expect(events.requests[0]?.url).toBe(`${TASKS}/events?taskId=t1`);
    await waitFor(() => expect(contactRequests()).toHaveLength(1));

    release.open();
    await waitFor(() => expect(stat('已完成')).toBe('120'));
    expect(stat('呼叫中')).toBe('5');
    expect(stat('接通率')).toBe('40%');
    expect(screen.getByText('120/200')).toBeTruthy();
    expect(within(screen.getByLabelText('结果分布')).getByText('未接听 70')).toBeTruthy();
    expect(gradeRow('A')).toContain('20（66.7%）');
    // The contacts follow the counts, a moment later.
    await waitFor(() => expect(contactRequests().length).toBeGreaterThan(1));
  });

  it('pages and filters the contacts on the server and opens a contact’s last call', async () => {
    serveTaskEvents();
    server = serveApi({
      ...common,
      [`GET ${TASKS}/t1`]: ok(makeDetail({ waitingUntil: '2026-03-02T01:00:00.000Z' })),
      [`GET ${TASKS}/t1/contacts`]: (request) =>
        ok(
          paged(
            [
              makeContact({ id: `k${String(request.config.params.page)}` }),
              makeContact({
                id: 'k9',
                phone: '13900000009',
                name: '',
                status: 'retry',
                attempts: 2,
                lastEndReason: 'busy',
                lastCallId: null,
                intentGrade: null,
              }),
            ],
            45,
            Number(request.config.params.page),
          ),
        ),
    });
    const router = renderCallTask('/call-task/task-detail/t1');
    expect(
      await screen.findByText(
        `等待中：将于 ${dayjs('2026-03-02T01:00:00.000Z').format('MM-DD HH:mm')} 开始呼叫`,
      ),
    ).toBeTruthy();
    expect(await screen.findByText('共 45 条')).toBeTruthy();
    const retrying = screen.getByText('13900000009').closest('tr') as HTMLElement;
    expect(within(retrying).getByText('等待重拨')).toBeTruthy();
    expect(within(retrying).getByText('忙线')).toBeTruthy();
    expect(within(retrying).getByText('2')).toBeTruthy();

    fireEvent.click(screen.getByTitle('2'));
    await waitFor(() => expect(contactRequests().at(-1)?.config.params).toMatchObject({ page: 2 }));

    fireEvent.mouseDown(screen.getByLabelText('联系人状态'));
    fireEvent.click(await screen.findByTitle('等待重拨'));
    await waitFor(() =>
      expect(contactRequests().at(-1)?.config.params).toEqual({ page: 1, pageSize: 20, status: 'retry' }),
    );
    fireEvent.change(screen.getByLabelText('搜索号码'), { target: { value: '1390' } });
    fireEvent.keyDown(screen.getByLabelText('搜索号码'), { key: 'Enter', code: 'Enter', keyCode: 13 });
    await waitFor(() =>
      expect(contactRequests().at(-1)?.config.params).toEqual({
        page: 1,
        pageSize: 20,
        status: 'retry',
        phone: '1390',
      }),
    );

    const callLink = screen.getByRole('link', { name: '查看通话' });
    expect(callLink.getAttribute('href')).toBe('/call-record/detail/c1');
    fireEvent.click(callLink);
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/detail/c1'));
    expect(useQueryCacheStore.getState().callDetailBackUrl).toBe('/call-task/task-detail/t1');
  });

  it('imports pasted numbers into a paused task and offers to edit it', async () => {
    serveTaskEvents();
    let total = 200;
    server = serveApi({
      ...common,
      [`GET ${TASKS}/t1`]: () => ok(makeDetail({ state: 'paused', counts: { ...makeTask().counts, total } })),
      [`GET ${TASKS}/t1/contacts`]: ok(paged([])),
      [`POST ${TASKS}/t1/imports/paste`]: ok(
        makePreview({
          importId: 'i2',
          fileName: '',
          headers: ['号码', '姓名'],
          sample: [{ 号码: '13800000003', 姓名: '王五' }],
          rows: 2,
          valid: 1,
          invalid: 0,
          duplicates: 1,
          mapping: { phone: '号码', name: '姓名', variables: {} },
        }),
      ),
      [`POST ${TASKS}/t1/imports/i2/commit`]: () => {
        total = 201;
        return ok({ added: 1, invalid: 0, duplicates: 1, doNotCall: 0 });
      },
    });
    const router = renderCallTask('/call-task/task-detail/t1');
    expect(await screen.findByRole('button', { name: '继续' })).toBeTruthy();
    expect(screen.getByRole('button', { name: '编辑' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: '暂停' })).toBeNull();

    fireEvent.click(screen.getByRole('button', { name: '导入联系人' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByText('粘贴号码'));
    fireEvent.change(await within(dialog).findByLabelText('号码列表'), {
      target: { value: '13800000003,王五\n13800000001' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: '解析号码' }));
    expect(await within(dialog).findByText('王五')).toBeTruthy();
    expect(server.requests.find((request) => request.url.endsWith('/imports/paste'))?.body).toEqual({
      text: '13800000003,王五\n13800000001',
    });
    // The variable of the assistant version is offered even though the paste has no such column.
    expect(within(dialog).getByLabelText('变量 课程 列')).toBeTruthy();
    fireEvent.click(within(dialog).getByRole('button', { name: '确认导入' }));
    expect(await within(dialog).findByText('已导入 1 个联系人')).toBeTruthy();
    expect(within(dialog).getByText(/未导入重复号码 1 行/)).toBeTruthy();
    await waitFor(() => expect(stat('联系人')).toBe('201'));

    fireEvent.click(within(dialog).getByRole('button', { name: /关闭|Close/ }));
    fireEvent.click(screen.getByRole('button', { name: '编辑' }));
    await waitFor(() => expect(router.state.location.search).toBe('?id=t1'));
  });
});
