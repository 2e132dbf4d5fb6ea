import type { CallSummary, DashboardSummary, DashboardTask } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useQueryCacheStore } from '@/stores/query-cache-store';
import { useUserStore } from '@/stores/user-store';
import { dashboardFigures as figures, quietDashboard as quiet } from '@/test/api-fixtures';
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

const task: DashboardTask = {
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
    calls: 100,
  },
  progress: 0.385,
  waitingUntil: null,
  createdAt: '2026-03-01T02:00:00.000Z',
  startedAt: '2026-03-01T03:00:00.000Z',
  finishedAt: null,
  activeCalls: 3,
  answerRate: 0.52,
  expectedFinishAt: '2026-03-12T08:00:00.000Z',
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
  it('shows today against yesterday, the week, tasks, attention, limits and the latest calls, each linking on', async () => {
    serve(
      quiet({
        today: figures({
          calls: 128,
          outbound: 100,
          inbound: 28,
          answered: 64,
          answerRate: 0.5,
          talkMinutes: 95.5,
          abShare: 0.25,
          drill: { from: '2026-03-09T16:00:00.000Z', to: '2026-03-10T02:30:00.000Z' },
        }),
        yesterdaySameTime: figures({
          calls: 100,
          answered: 45,
          answerRate: 0.45,
          talkMinutes: 80,
          abShare: 0.25,
        }),
        weekAverageSameTime: figures({
          calls: 160,
          answered: 80,
          answerRate: 0.5,
          talkMinutes: 95.5,
          abShare: 0.3,
        }),
        last7Days: figures({
          calls: 1024,
          answered: 410,
          answerRate: 0.4004,
          talkMinutes: 800,
          abShare: 0.3,
        }),
        runningTasks: [task],
        attention: [
          {
            kind: 'trunk_failing',
            level: 'error',
            title: '线路「电信中继」注册失败',
            detail: '403 Forbidden',
            link: '/ivr/trunks?trunk=tr1',
          },
        ],
        limits: {
          hasBalance: true,
          balanceFen: 123456,
          concurrentCallout: 20,
          concurrentCallin: 5,
          activeOutbound: 3,
          activeInbound: 1,
        },
      }),
      [call],
    );
    const router = renderRoute('/dashboard', { path: '/dashboard', element: <DashboardPage /> }, [
      '/call-record/detail/:id',
      '/call-record/list',
      '/ivr/trunks',
    ]);
    expect(await screen.findByText('欢迎，王小明')).toBeTruthy();
    const today = await screen.findByRole('region', { name: '今日' });
    expect(figure('今日', '通话数')).toBe('128');
    expect(figure('今日', '接通率')).toBe('50%');
    expect(figure('今日', '通话分钟')).toBe('95.5');
    expect(figure('今日', 'A/B 意向占比')).toBe('25%');
    // 128 against 100 yesterday and 160 on average; rates in points.
    expect(within(today).getAllByText('↑28%')).toHaveLength(1);
    expect(within(today).getByText('↓20%')).toBeTruthy();
    expect(within(today).getByText('↑5 个百分点')).toBeTruthy();
    expect(within(today).getByText(/呼出 100 · 呼入 28/)).toBeTruthy();
    expect(figure('近 7 日', '通话数')).toBe('1,024');
    expect(figure('近 7 日', '接通率')).toBe('40%');

    const limits = screen.getByRole('region', { name: '余额与并发' });
    expect(within(limits).getByText('¥1,234.56')).toBeTruthy();
    expect(within(limits).getByText('3 / 20')).toBeTruthy();

    const attention = screen.getByRole('region', { name: '需要关注' });
    expect(within(attention).getByText('线路「电信中继」注册失败')).toBeTruthy();
    expect(
      within(attention).getByRole('link', { name: '处理：线路「电信中继」注册失败' }).getAttribute('href'),
    ).toBe('/ivr/trunks?trunk=tr1');

    const running = screen.getByRole('region', { name: '进行中的任务' });
    expect(within(running).getByRole('link', { name: '3 月课程回访' }).getAttribute('href')).toBe(
      '/call-task/task-detail/t1',
    );
    expect(within(running).getByText('进行中 · 77/200')).toBeTruthy();
    expect(within(running).getByText(/3 通进行中 · 接通率 52% · 预计 03-12 16:00 完成/)).toBeTruthy();

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

  it('opens the calls behind today’s count', async () => {
    serve(
      quiet({
        today: figures({
          calls: 12,
          drill: { from: '2026-03-09T16:00:00.000Z', to: '2026-03-10T02:30:00.000Z' },
        }),
      }),
      [],
    );
    const router = renderRoute('/dashboard', { path: '/dashboard', element: <DashboardPage /> }, [
      '/call-record/list',
    ]);
    fireEvent.click(await screen.findByRole('link', { name: '今日通话数 12，查看通话记录' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/list'));
    expect(Object.fromEntries(new URLSearchParams(router.state.location.search))).toEqual({
      from: '2026-03-09T16:00:00.000Z',
      to: '2026-03-10T02:30:00.000Z',
    });
  });

  it('tells a new project how to begin instead of showing a wall of zeros alone', async () => {
    serve(quiet(), []);
    renderRoute('/dashboard', { path: '/dashboard', element: <DashboardPage /> });
    expect(await screen.findByText(/还没有通话。先在「智能小助手」中发布一个小助手/)).toBeTruthy();
    expect(figure('今日', '接通率')).toBe('-');
    expect(screen.getByText('暂无进行中的任务')).toBeTruthy();
    expect(await screen.findByText(/暂无通话：任务开始呼叫/)).toBeTruthy();
    // Nothing to attend to: no empty alarm box; comparisons without a base say "-", not ↑∞.
    expect(screen.queryByRole('region', { name: '需要关注' })).toBeNull();
    expect(within(screen.getByRole('region', { name: '今日' })).getAllByText('-').length).toBeGreaterThan(0);
    expect(within(screen.getByRole('region', { name: '余额与并发' })).getAllByText('0 / 不限')).toHaveLength(
      2,
    );
  });
});
