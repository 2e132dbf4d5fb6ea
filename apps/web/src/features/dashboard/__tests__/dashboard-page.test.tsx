import type { CallSummary, DashboardSummary, TaskSummary } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useQueryCacheStore } from '@/stores/query-cache-store';
import { useUserStore } from '@/stores/user-store';
import { failure, ok, startFakeServer } from '@/test/fake-server';
import { renderRoute, routeKey } from '@/test/render-route';
import { DashboardPage } from '../pages/dashboard-page';

const user = {
  isOwnerOrAdmin: true,
  id: 'u1',
  email: 'owner@example.com',
  displayName: '王小明',
  profile: '',
  projects: [{ id: 'p1', disabled: false, name: '华东外呼项目' }],
};

const zero = { calls: 0, answered: 0, answerRate: null, talkMinutes: 0, abShare: null };

const task: TaskSummary = {
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
    total: 200,
    waiting: 120,
    dialing: 3,
    finished: 77,
    answered: 40,
    skipped: 0,
    calls: 100,
    byEndReason: {},
    byGrade: {},
  },
  progress: 0.385,
  waitingUntil: null,
  createdAt: '2026-03-01T02:00:00.000Z',
  startedAt: '2026-03-01T03:00:00.000Z',
  finishedAt: null,
};

const call = {
  id: 'c1',
  calleeNumber: '13800000001',
  callerNumber: '02100000001',
  contactName: '张三',
  taskName: '3 月课程回访',
  status: 'ended',
  endReason: 'completed',
  talkSeconds: 125,
  intentGrade: 'A',
  startedAt: '2026-03-01T02:00:00.000Z',
} as CallSummary;

let server: ReturnType<typeof startFakeServer> | undefined;

function serve(summary: DashboardSummary, calls: CallSummary[]) {
  server = startFakeServer((request) => {
    const replies: Record<string, ReturnType<typeof ok>> = {
      'GET /api/user/current': ok(user),
      'GET /api/project/p1/dashboard': ok(summary),
      'GET /api/project/p1/calls': ok({ items: calls, total: calls.length, page: 1, pageSize: 8 }),
    };
    return replies[routeKey(request)] ?? failure(404, '请求地址出错');
  });
}

beforeEach(() => {
  localStorage.setItem('token', 'tok-1');
  useUserStore.getState().setUserInfo(user);
  useQueryCacheStore.setState({ callDetailBackUrl: null });
});
afterEach(() => {
  server?.stop();
  server = undefined;
});

const figure = (card: string, label: string) =>
  (within(screen.getByRole('region', { name: card })).getByText(label).nextElementSibling as HTMLElement)
    .textContent;

describe('dashboard', () => {
  it('shows today’s and the week’s figures, running tasks and the latest calls, each linking on', async () => {
    serve(
      {
        today: { calls: 128, answered: 64, answerRate: 0.5, talkMinutes: 95.5, abShare: 0.25 },
        last7Days: { calls: 1024, answered: 410, answerRate: 0.4004, talkMinutes: 800, abShare: 0.3 },
        runningTasks: [task],
      },
      [call],
    );
    const router = renderRoute('/dashboard', { path: '/dashboard', element: <DashboardPage /> }, [
      '/call-record/detail/:id',
    ]);
    expect(await screen.findByText('欢迎，王小明')).toBeTruthy();
    expect(await screen.findByRole('region', { name: '今日' })).toBeTruthy();
    expect(figure('今日', '通话数')).toBe('128');
    expect(figure('今日', '接通率')).toBe('50%');
    expect(figure('今日', '通话分钟')).toBe('95.5');
    expect(figure('今日', 'A/B 意向占比')).toBe('25%');
    expect(figure('近 7 日', '通话数')).toBe('1,024');
    expect(figure('近 7 日', '接通率')).toBe('40%');

    const running = screen.getByRole('region', { name: '进行中的任务' });
    expect(within(running).getByRole('link', { name: '3 月课程回访' }).getAttribute('href')).toBe(
      '/call-task/task-detail/t1',
    );
    expect(within(running).getByText('进行中 · 77/200')).toBeTruthy();

    const latest = screen.getByRole('region', { name: '最近通话' });
    expect(await within(latest).findByText('正常结束')).toBeTruthy();
    expect(within(latest).getByText('02:05')).toBeTruthy();
    expect(
      server?.requests.find((request) => request.url === '/api/project/p1/calls')?.config.params,
    ).toEqual({
      page: 1,
      pageSize: 8,
    });
    const callLink = within(latest).getByRole('link', { name: '13800000001 张三' });
    expect(callLink.getAttribute('href')).toBe('/call-record/detail/c1');
    fireEvent.click(callLink);
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/detail/c1'));
    expect(useQueryCacheStore.getState().callDetailBackUrl).toBe('/dashboard');
  });

  it('tells a new project how to begin instead of showing a wall of zeros alone', async () => {
    serve({ today: zero, last7Days: zero, runningTasks: [] }, []);
    renderRoute('/dashboard', { path: '/dashboard', element: <DashboardPage /> });
    expect(await screen.findByText(/还没有通话。先在「智能小助手」中发布一个小助手/)).toBeTruthy();
    expect(figure('今日', '接通率')).toBe('-');
    expect(screen.getByText('暂无进行中的任务')).toBeTruthy();
    expect(await screen.findByText(/暂无通话：任务开始呼叫/)).toBeTruthy();
  });
});
