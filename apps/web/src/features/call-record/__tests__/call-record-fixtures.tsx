import type { CallDetail } from '@callpilot/contracts';
import { render } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { AppProvider } from '@/app/provider';
import { setRequestNavigator } from '@/lib/request';
import { useUserStore } from '@/stores/user-store';
import { makeCall, makeCallDetail, makeTurn } from '@/test/api-fixtures';
import { type FakeFetchReply, type RecordedFetch, type StreamGate, startFakeFetch } from '@/test/fake-fetch';
import { type FakeReply, failure, type RecordedRequest, startFakeServer } from '@/test/fake-server';
import { routeKey } from '@/test/render-route';
import { CallRecordSection } from '../pages/call-record-section';

export const CALLS = '/api/project/p1/calls';

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
}

export { makeCall, makeTurn };

export function makeDetail(overrides: Partial<CallDetail> = {}): CallDetail {
  return makeCallDetail({
    turns: [
      makeTurn({ index: 0, text: '您好，我是示例教育的小李。' }),
      makeTurn({ index: 1, text: '学费多少钱？' }),
      makeTurn({
        index: 2,
        text: '学费是 2980 元，可以分 3 期付款。',
        latency: { recognitionMs: 120, retrievalMs: 30, brainMs: 800, firstTokenMs: 300, synthesisMs: 200 },
        segments: [
          {
            id: 's1',
            knowledgeBaseId: 'kb1',
            documentName: '课程价格.md',
            content: '学费 2980 元',
            score: 0.82,
          },
        ],
      }),
      makeTurn({ index: 3, text: '', dtmf: '1' }),
    ],
    analysisBy: 'llm',
    gradeReason: '客户主动询问价格并约试听',
    fields: { 意向产品: '少儿编程课' },
    recordingDurationMs: 130_000,
    recordingError: null,
    ...overrides,
  });
}

export const paged = <T,>(items: T[], total = items.length, page = 1, pageSize = 20) => ({
  items,
  total,
  page,
  pageSize,
});

type Handler = (request: RecordedRequest) => FakeReply | undefined;

/** Serves the JSON API by `METHOD /path` (a function reply sees the request), 404 otherwise. */
export function serveCalls(replies: Record<string, FakeReply | Handler>) {
  return startFakeServer((request) => {
    const reply = replies[routeKey(request)];
    const answer = typeof reply === 'function' ? reply(request) : reply;
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

/** The live event stream: `first` answers the first connection, later ones stay silent. */
export function serveEvents(first: (request: RecordedFetch) => FakeFetchReply) {
  let connections = 0;
  return startFakeFetch((request) => {
    if (!request.url.startsWith(`${CALLS}/events`)) return { status: 404, json: { success: false } };
    connections += 1;
    return connections === 1 ? first(request) : { status: 200, chunks: [gate().promise] };
  });
}

/** Renders the section on the shell's two routes, so both the list and a detail can be reached. */
export function renderCallRecord(entry: string) {
  const router = createMemoryRouter(
    ['/call-record/list', '/call-record/detail/:id'].map((path) => ({
      path,
      element: <CallRecordSection />,
    })),
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
