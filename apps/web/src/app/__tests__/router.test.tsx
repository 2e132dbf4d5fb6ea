import { screen } from '@testing-library/react';
import type { NonIndexRouteObject } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { quietDashboard } from '@/test/api-fixtures';
import { failure, ok, startFakeServer } from '@/test/fake-server';
import { renderApp } from '@/test/render-route';
import { routes } from '../router';

const currentUser = {
  isOwnerOrAdmin: true,
  id: 'u1',
  email: 'owner@example.com',
  displayName: '王小明',
  profile: '',
  projects: [
    { id: 'p1', name: '华东外呼项目', company: '示例公司', industry: '教育', disabled: false, role: 'owner' },
  ],
};

function Broken(): never {
  throw new Error('组件加载失败');
}

let server: ReturnType<typeof startFakeServer> | undefined;

afterEach(() => {
  server?.stop();
  server = undefined;
  window.history.replaceState(null, '', '/');
});

describe('router', () => {
  it('sends an unknown path to / and on to the dashboard, showing 加载中... meanwhile', async () => {
    server = startFakeServer((request) => {
      if (request.url.endsWith('/dashboard')) return ok(quietDashboard());
      if (request.url.includes('/calls')) return ok({ items: [], total: 0, page: 1, pageSize: 8 });
      return ok(currentUser);
    });
    const router = renderApp('/no/such/page');

    expect(screen.getByText('加载中...')).toBeTruthy();
    expect(await screen.findByRole('heading', { name: '首页' })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/dashboard');
    expect(await screen.findByText('欢迎，王小明')).toBeTruthy();
    expect(screen.getByText('当前项目：华东外呼项目')).toBeTruthy();
    // A project without calls yet: an honest empty state, not zeros dressed up as figures.
    expect(await screen.findByText(/暂无通话：任务开始呼叫或小助手测试通话后会显示在这里/)).toBeTruthy();
  });

  it('sends a signed-out visitor of the dashboard to login with the way back', async () => {
    // The 401 flow reads the address bar, which the browser router keeps in step with the route.
    window.history.replaceState(null, '', '/dashboard');
    server = startFakeServer(() => failure(401, '令牌无效', 'UNAUTHORIZED'));
    const router = renderApp('/dashboard');

    expect(await screen.findByText('未登录或登录已过期')).toBeTruthy();
    expect(await screen.findByLabelText('邮箱/手机号', undefined, { timeout: 3000 })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/login');
    expect(router.state.location.search).toBe('?redirect=%2Fdashboard');
  });

  it('shows the root error page when a route fails', async () => {
    // React and the router log the thrown error; the assertion below is what matters here.
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const root = routes[0] as NonIndexRouteObject;
    renderApp('/broken', [
      { ...root, children: [...(root.children ?? []), { path: '/broken', Component: Broken }] },
    ]);

    expect(await screen.findByRole('heading', { name: '出错了' })).toBeTruthy();
    expect(screen.getByText('组件加载失败')).toBeTruthy();
    expect(screen.getByRole('button', { name: '重试' })).toBeTruthy();
  });
});
