import type {
  AssistantVersion,
  CallSummary,
  ImportPreview,
  TaskContact,
  TaskDetail,
  TaskSummary,
} from '@callpilot/contracts';
import { DEFAULT_RETRY_RULES, DEFAULT_WINDOWS } from '@callpilot/contracts';
import { render } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { AppProvider } from '@/app/provider';
import { setRequestNavigator } from '@/lib/request';
import { useQueryCacheStore } from '@/stores/query-cache-store';
import { useUserStore } from '@/stores/user-store';
import { makeAssistant, makeCall as makeSharedCall } from '@/test/api-fixtures';
import { type FakeFetchReply, type RecordedFetch, type StreamGate, startFakeFetch } from '@/test/fake-fetch';
import { type FakeReply, failure, type RecordedRequest, startFakeServer } from '@/test/fake-server';
import { routeKey } from '@/test/render-route';
import { CallTaskSection } from '../pages/call-task-section';

export const TASKS = '/api/project/p1/tasks';

export function signIn() {
  localStorage.setItem('token', 'tok-1');
  useUserStore.getState().setUserInfo({
    isOwnerOrAdmin: true,
    id: 'u1',
    email: 'owner@example.com',
    displayName: '王小明',
    profile: '',
    projects: [{ id: 'p1', disabled: false, name: '华东外呼项目' }],
  });
  useQueryCacheStore.setState({
    callRecordQueryCache: null,
    callTaskQueryCache: null,
    callDetailBackUrl: null,
  });
}

export const openLimits = {
  assistantLimit: 0,
  knowledgeLimit: 0,
  ttsCloneLimit: 0,
  hasBalance: false,
  concurrentCallin: 0,
  concurrentCallout: 0,
};

const emptyCounts = {
  total: 0,
  waiting: 0,
  dialing: 0,
  finished: 0,
  answered: 0,
  skipped: 0,
  calls: 0,
  byEndReason: {},
  byGrade: {},
};

export function makeTask(overrides: Partial<TaskSummary> = {}): TaskSummary {
  return {
    id: 't1',
    name: '3 月课程回访',
    state: 'running',
    assistantId: 'a1',
    assistantName: '课程回访小助手',
    assistantVersion: 2,
    startDate: '2026-03-01',
    endDate: '2026-03-31',
    concurrency: 5,
    counts: {
      ...emptyCounts,
      total: 200,
      waiting: 120,
      dialing: 3,
      finished: 77,
      answered: 40,
      calls: 100,
      byEndReason: { completed: 30, callee_hangup: 10, no_answer: 50, busy: 10 },
      byGrade: { A: 10, B: 15, C: 10, D: 5 },
    },
    progress: 0.385,
    waitingUntil: null,
    createdAt: '2026-03-01T02:00:00.000Z',
    startedAt: '2026-03-01T03:00:00.000Z',
    finishedAt: null,
    ...overrides,
  };
}

export function makeDetail(overrides: Partial<TaskDetail> = {}): TaskDetail {
  return {
    ...makeTask(),
    settings: {
      name: '3 月课程回访',
      assistantId: 'a1',
      assistantVersion: 2,
      callerNumbers: ['02100000001'],
      startDate: '2026-03-01',
      endDate: '2026-03-31',
      windows: DEFAULT_WINDOWS,
      skipHolidays: true,
      concurrency: 5,
      retryRules: DEFAULT_RETRY_RULES,
      dailyCapPerNumber: 2,
    },
    activeCalls: 3,
    etaSeconds: 5400,
    answerRate: 0.4,
    importRejected: 0,
    ...overrides,
  };
}

export const emptyTaskCounts = emptyCounts;

export function makeContact(overrides: Partial<TaskContact> = {}): TaskContact {
  return {
    id: 'k1',
    phone: '13800000001',
    name: '张三',
    variables: {},
    status: 'done',
    attempts: 1,
    nextAttemptAt: null,
    lastEndReason: 'completed',
    lastCallId: 'c1',
    skipReason: null,
    intentGrade: 'A',
    ...overrides,
  };
}

export { makeAssistant };

export function makeVersion(version: number, variables: string[] = ['课程']): AssistantVersion {
  return {
    version,
    note: '',
    name: '课程回访小助手',
    use: 'outbound',
    publishedAt: '2026-02-01T02:00:00.000Z',
    publishedBy: 'u1',
    submittedBy: null,
    config: {
      variables: variables.map((name) => ({ name, sample: '', required: false })),
    } as unknown as AssistantVersion['config'],
  };
}

export function makePreview(overrides: Partial<ImportPreview> = {}): ImportPreview {
  return {
    importId: 'i1',
    fileName: '联系人.csv',
    headers: ['手机', '客户', '课程'],
    sample: [
      { 手机: '13800000001', 客户: '张三', 课程: '少儿编程' },
      { 手机: '123', 客户: '李四', 课程: '' },
    ],
    rows: 1000,
    valid: 990,
    invalid: 6,
    duplicates: 4,
    doNotCall: 0,
    mapping: { phone: '手机', name: '客户', variables: {} },
    ...overrides,
  };
}

/** A call of task t1, to its contact 张三. */
export const makeCall = (overrides: Partial<CallSummary> = {}): CallSummary =>
  makeSharedCall({
    taskId: 't1',
    taskName: '3 月课程回访',
    contactId: 'k1',
    contactName: '张三',
    summary: '',
    ...overrides,
  });

export const paged = <T,>(items: T[], total = items.length, page = 1, pageSize = 20) => ({
  items,
  total,
  page,
  pageSize,
});

type Handler = (request: RecordedRequest) => FakeReply | undefined | Promise<FakeReply>;

/** Serves the JSON API by `METHOD /path` (a function reply sees the request), 404 otherwise. */
export function serveApi(replies: Record<string, FakeReply | Handler>) {
  return startFakeServer(async (request) => {
    const reply = replies[routeKey(request)];
    const answer = typeof reply === 'function' ? await reply(request) : reply;
    return answer ?? failure(404, '请求地址出错');
  });
}

/** A gate the test opens when it wants the next chunk of an event stream to arrive. */
export function gate(): { promise: StreamGate; open: () => void } {
  let open: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** The task event stream: `first` answers the first connection, later ones stay silent. */
export function serveTaskEvents(
  first: (request: RecordedFetch) => FakeFetchReply = () => ({ status: 200, chunks: [gate().promise] }),
) {
  let connections = 0;
  return startFakeFetch((request) => {
    if (!request.url.startsWith(`${TASKS}/events`)) return { status: 404, json: { success: false } };
    connections += 1;
    return connections === 1 ? first(request) : { status: 200, chunks: [gate().promise] };
  });
}

export const SECTION_ROUTES = [
  '/call-task/list',
  '/call-task/add',
  '/call-task/task-detail/:id',
  '/call-task/task-detail-list',
];

/** Renders the section on its routes, with a stand-in for the call detail page it links to. */
export function renderCallTask(entry: string) {
  const router = createMemoryRouter(
    [
      ...SECTION_ROUTES.map((path) => ({ path, element: <CallTaskSection /> })),
      { path: '/call-record/detail/:id', element: <p>通话详情页</p> },
    ],
    { initialEntries: [entry] },
  );
  setRequestNavigator((to) => {
    void router.navigate(to);
  });
  render(
    <AppProvider>
      <RouterProvider router={router} />
    </AppProvider>,
  );
  return router;
}
