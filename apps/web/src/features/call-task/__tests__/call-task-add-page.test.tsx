import { DEFAULT_RETRY_RULES, DEFAULT_WINDOWS, type TaskPreflight } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ok } from '@/test/fake-server';
import {
  emptyTaskCounts,
  gate,
  makeAssistant,
  makeDetail,
  makePreview,
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

beforeEach(() => {
  signIn();
  Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:rejects'), revokeObjectURL: vi.fn() });
});
afterEach(() => {
  server?.stop();
  server = undefined;
});

const common = {
  'GET /api/project/p1/balance-limit': ok(openLimits),
  'GET /api/project/p1/assistants': ok(
    paged([makeAssistant(), makeAssistant({ id: 'a3', name: '未发布小助手', publishedVersion: null })]),
  ),
  'GET /api/project/p1/assistants/a1/versions': ok([makeVersion(1), makeVersion(2, ['课程'])]),
  'GET /api/project/p1/numbers': ok([
    { number: '02100000001', label: '总机', enabled: true, createdAt: '2026-01-01T00:00:00.000Z' },
  ]),
};

const preflight: TaskPreflight = {
  contacts: 991,
  maxCalls: 2973,
  expectedCalls: 1500,
  expectedSeconds: 7200,
  expectedFinishAt: '2026-03-02T10:00:00.000Z',
  concurrency: 5,
  projectConcurrency: null,
  balanceOk: true,
  problems: [],
};

function fileInput(): HTMLInputElement {
  const input = document.querySelector('input[type="file"]');
  if (!(input instanceof HTMLInputElement)) throw new Error('no file input');
  return input;
}

const count = (label: string) =>
  (within(screen.getByLabelText('校验结果')).getByText(label).nextElementSibling as HTMLElement).textContent;

describe('call task wizard', () => {
  it('creates the draft, uploads with progress, remaps, shows the counts, commits, checks and starts', async () => {
    const uploadSent = gate();
    const parsed = gate();
    let total = 0;
    let state: 'draft' | 'running' = 'draft';
    const draft = () =>
      makeDetail({
        id: 't9',
        name: '春季试听邀约',
        state,
        counts: { ...emptyTaskCounts, total },
        progress: 0,
      });
    serveTaskEvents();
    server = serveApi({
      ...common,
      [`POST ${TASKS}`]: () => ok(draft()),
      [`GET ${TASKS}/t9`]: () => ok(draft()),
      [`POST ${TASKS}/t9/imports`]: async (request) => {
        request.config.onUploadProgress?.({ loaded: 50, total: 100, bytes: 50, lengthComputable: true });
        await uploadSent.promise;
        request.config.onUploadProgress?.({ loaded: 100, total: 100, bytes: 50, lengthComputable: true });
        await parsed.promise;
        return ok(makePreview());
      },
      [`POST ${TASKS}/t9/imports/i1/preview`]: (request) =>
        ok(makePreview({ valid: 991, invalid: 5, mapping: (request.body as { mapping: never }).mapping })),
      [`GET ${TASKS}/t9/imports/i1/rejects`]: ok('原行号,号码,姓名,原因'),
      [`POST ${TASKS}/t9/imports/i1/commit`]: () => {
        total = 991;
        return ok({ added: 991, invalid: 5, duplicates: 4, doNotCall: 0 });
      },
      [`GET ${TASKS}/t9/preflight`]: ok(preflight),
      [`POST ${TASKS}/t9/actions/start`]: () => {
        state = 'running';
        return ok(draft());
      },
      [`GET ${TASKS}/t9/contacts`]: ok(paged([])),
    });
    const router = renderCallTask('/call-task/add');

    fireEvent.change(await screen.findByLabelText('任务名称'), { target: { value: '春季试听邀约' } });
    fireEvent.mouseDown(screen.getByLabelText('小助手'));
    // Only published assistants are offered, with their version.
    expect(screen.queryByTitle(/未发布小助手/)).toBeNull();
    fireEvent.click(await screen.findByTitle('课程回访小助手（v2）'));
    await waitFor(() => expect(screen.getByTitle('v2')).toBeTruthy());
    fireEvent.mouseDown(screen.getByLabelText('外显号码'));
    fireEvent.click(await screen.findByTitle('02100000001（总机）'));
    fireEvent.click(screen.getByRole('button', { name: '保存并下一步' }));

    await waitFor(() => expect(router.state.location.search).toBe('?id=t9&step=1'));
    const created = server.requests.find((request) => request.method === 'POST' && request.url === TASKS);
    expect(created?.body).toMatchObject({
      name: '春季试听邀约',
      assistantId: 'a1',
      assistantVersion: 2,
      callerNumbers: ['02100000001'],
      windows: DEFAULT_WINDOWS,
      skipHolidays: true,
      concurrency: 5,
      dailyCapPerNumber: 2,
      retryRules: DEFAULT_RETRY_RULES,
    });

    expect(await screen.findByText(/当前共/)).toBeTruthy();
    fireEvent.change(fileInput(), {
      target: { files: [new File(['手机,客户\n13800000001,张三'], '联系人.csv', { type: 'text/csv' })] },
    });
    await waitFor(() =>
      expect(screen.getByRole('progressbar', { name: '上传进度' }).getAttribute('aria-valuenow')).toBe('50'),
    );
    uploadSent.open();
    expect(await screen.findByText(/解析中/)).toBeTruthy();
    parsed.open();

    expect(await screen.findByLabelText('校验结果')).toBeTruthy();
    expect(count('总行数')).toBe('1,000');
    expect(count('有效')).toBe('990');
    expect(count('号码无效')).toContain('6');
    expect(screen.getByRole('button', { name: '下载号码无效' })).toBeTruthy();
    expect(screen.getByRole('button', { name: '下载重复' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: '下载免打扰' })).toBeNull();
    expect(within(screen.getByRole('table')).getByText('李四')).toBeTruthy();

    // The assistant's variable is offered for mapping; choosing its column recounts on the server.
    fireEvent.mouseDown(screen.getByLabelText('变量 课程 列'));
    const options = await screen.findAllByTitle('课程');
    fireEvent.click(options.at(-1) as HTMLElement);
    await waitFor(() => expect(count('有效')).toBe('991'));
    const recount = server.requests.find((request) => request.url.endsWith('/imports/i1/preview'));
    expect(recount?.body).toEqual({ mapping: { phone: '手机', name: '客户', variables: { 课程: '课程' } } });

    fireEvent.click(screen.getByRole('button', { name: '下载号码无效' }));
    await waitFor(() => expect(URL.createObjectURL).toHaveBeenCalled());
    const rejects = server.requests.find((request) => request.url.endsWith('/rejects'));
    expect(rejects?.config.params).toEqual({ kind: 'invalid' });

    fireEvent.click(screen.getByRole('button', { name: '确认导入' }));
    expect(await screen.findByText('已导入 991 个联系人')).toBeTruthy();
    expect(server.requests.find((request) => request.url.endsWith('/commit'))?.body).toEqual({
      importId: 'i1',
      mapping: { phone: '手机', name: '客户', variables: { 课程: '课程' } },
    });
    expect(await screen.findByText('991')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: '下一步' }));
    expect(await screen.findByText('991 个')).toBeTruthy();
    expect(screen.getByText('2,973 次（含重拨）')).toBeTruthy();
    expect(screen.getByText('2 小时')).toBeTruthy();
    expect(screen.getByText('预检通过，可以启动')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: '立即启动' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-task/task-detail/t9'));
    expect(server.requests.some((request) => request.url.endsWith('/actions/start'))).toBe(true);
    expect(await screen.findByRole('heading', { name: '春季试听邀约' })).toBeTruthy();
  });

  it('names the missing fields and sends nothing', async () => {
    server = serveApi({ ...common });
    renderCallTask('/call-task/add');
    fireEvent.click(await screen.findByRole('button', { name: '保存并下一步' }));
    expect(await screen.findByText('请输入任务名称')).toBeTruthy();
    expect(screen.getByText('请选择小助手')).toBeTruthy();
    expect(server.requests.some((request) => request.method === 'POST')).toBe(false);
  });

  it('refuses to start while the pre-flight finds problems, and can keep the draft', async () => {
    serveTaskEvents();
    server = serveApi({
      ...common,
      [`GET ${TASKS}/t9`]: ok(makeDetail({ id: 't9', name: '春季试听邀约', state: 'draft' })),
      [`GET ${TASKS}/t9/preflight`]: ok({
        ...preflight,
        contacts: 0,
        balanceOk: false,
        problems: ['任务还没有联系人', '余额不足'],
      }),
      [`GET ${TASKS}/t9/contacts`]: ok(paged([])),
    });
    const router = renderCallTask('/call-task/add?id=t9&step=2');
    expect(await screen.findByText('任务还没有联系人')).toBeTruthy();
    expect(screen.getByText('余额不足')).toBeTruthy();
    expect(screen.getByRole('button', { name: '立即启动' }).hasAttribute('disabled')).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: '保存为草稿' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-task/task-detail/t9'));
  });
});
