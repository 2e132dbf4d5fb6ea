import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { isNavItemActive } from '@/config/nav';
import { setToken } from '@/lib/auth-token';
import { EMPTY_USER_INFO, useUserStore } from '@/stores/user-store';
import { failure, ok, startFakeServer } from '@/test/fake-server';
import { renderRoute } from '@/test/render-route';
import { AppSidebar } from '../app-sidebar';

let server: ReturnType<typeof startFakeServer> | undefined;

afterEach(() => {
  server?.stop();
  server = undefined;
  useUserStore.setState({ userInfo: EMPTY_USER_INFO });
});

function renderSidebar(entry: string, collapsed = false, onToggleCollapsed = () => {}) {
  return renderRoute(
    entry,
    { path: '*', element: <AppSidebar collapsed={collapsed} onToggleCollapsed={onToggleCollapsed} /> },
    ['/login'],
  );
}

function openUserMenu(name: RegExp) {
  const trigger = screen.getByRole('button', { name });
  fireEvent.pointerDown(trigger, { button: 0, ctrlKey: false, pointerType: 'mouse' });
}

describe('sidebar active rule', () => {
  it('marks an item active when the path starts with its url', () => {
    expect(isNavItemActive('/call-record/detail/7', '/call-record')).toBe(true);
    expect(isNavItemActive('/dashboard', '/call-record')).toBe(false);
  });

  it('never marks an item active on /settings', () => {
    expect(isNavItemActive('/settings', '/settings')).toBe(false);
    expect(isNavItemActive('/settings', '/')).toBe(false);
  });

  it('marks the current section with aria-current="page"', async () => {
    renderSidebar('/call-task/list');
    const link = await screen.findByRole('link', { name: '呼出任务' });
    expect(link.getAttribute('aria-current')).toBe('page');
    expect(screen.getByRole('link', { name: '通话记录' }).getAttribute('aria-current')).toBeNull();
    expect(screen.getByText('通话')).toBeTruthy();
    expect(screen.getByText('其他')).toBeTruthy();
  });
});

describe('sidebar', () => {
  it('labels the collapse toggle with its tooltip text', async () => {
    let toggled = 0;
    renderSidebar('/dashboard', false, () => {
      toggled += 1;
    });
    fireEvent.click(await screen.findByRole('button', { name: '折叠导航' }));
    expect(toggled).toBe(1);
  });

  it('offers 展开导航 when collapsed', async () => {
    renderSidebar('/dashboard', true);
    expect(await screen.findByRole('button', { name: '展开导航' })).toBeTruthy();
  });

  it('shows the user with - for a missing e-mail', async () => {
    useUserStore.setState({ userInfo: { ...EMPTY_USER_INFO, displayName: '王小明' } });
    renderSidebar('/dashboard');
    expect(await screen.findByText('王小明')).toBeTruthy();
    expect(screen.getByText('-')).toBeTruthy();
    expect(screen.getByTestId('avatar').textContent).toBe('王');
  });

  it('logs out from the user menu: token removed, on to /login', async () => {
    server = startFakeServer(() => ok(null));
    setToken('t1');
    useUserStore.setState({
      userInfo: { ...EMPTY_USER_INFO, displayName: '王小明', email: 'w@example.com' },
    });
    const router = renderSidebar('/dashboard');
    openUserMenu(/王小明/);
    fireEvent.click(await screen.findByRole('menuitem', { name: '退出登录' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toContain('GET /auth/logout');
    expect(localStorage.getItem('token')).toBeNull();
  });

  it('still signs out when the server refuses, toasting 登出失败', async () => {
    server = startFakeServer(() => failure(500, ''));
    setToken('t1');
    useUserStore.setState({ userInfo: { ...EMPTY_USER_INFO, displayName: 'jane doe' } });
    const router = renderSidebar('/dashboard');
    openUserMenu(/jane doe/);
    fireEvent.click(await screen.findByRole('menuitem', { name: '退出登录' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(await screen.findByText('登出失败')).toBeTruthy();
    expect(localStorage.getItem('token')).toBeNull();
  });
});
