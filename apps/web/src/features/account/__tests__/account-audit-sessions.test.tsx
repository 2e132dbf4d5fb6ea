import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeReply, failure, ok, startFakeServer } from '@/test/fake-server';
import { renderRoute, routeKey } from '@/test/render-route';
import { AccountInfoPage } from '../pages/account-info-page';

let server: ReturnType<typeof startFakeServer> | undefined;

beforeEach(() => localStorage.setItem('token', 'tok-1'));
afterEach(() => {
  server?.stop();
  server = undefined;
});

const userWithRole = (role: string) => ({
  isOwnerOrAdmin: role === 'owner' || role === 'admin',
  id: 'u1',
  email: 'owner@example.com',
  displayName: '王小明',
  profile: '',
  projects: [
    { id: 'p1', name: '华东外呼项目', company: '示例公司', industry: '教育培训', disabled: false, role },
  ],
});

const entry = (over: Record<string, unknown>) => ({
  id: 'e1',
  action: 'trunk.changed',
  actionLabel: '线路变更',
  actor: 'owner@example.com',
  targetType: 'trunk',
  targetId: 't1',
  summary: '新增 上海电信',
  detail: {},
  ip: '203.0.113.7',
  createdAt: '2026-03-02T02:00:00.000Z',
  ...over,
});

function renderAccount(entryUrl: string, role: string, replies: Record<string, FakeReply>) {
  server = startFakeServer(
    (request) =>
      ({ 'GET /api/user/current': ok(userWithRole(role)), ...replies })[routeKey(request)] ??
      failure(404, '请求地址出错'),
  );
  const router = renderRoute(entryUrl, { path: '/account-info', element: <AccountInfoPage /> }, ['/login']);
  return { router, requests: server.requests };
}

const row = (text: string) => screen.getByText(text).closest('tr')!;

describe('操作日志', () => {
  it('shows the project log to an owner, filters on the server and pages', async () => {
    const { requests } = renderAccount('/account-info?tab=audit-log', 'owner', {
      'GET /api/project/p1/audit-log': ok({
        items: [
          entry({}),
          entry({
            id: 'e2',
            action: 'api_key.created',
            actionLabel: '创建 API 密钥',
            actor: 'API 密钥：CRM',
            summary: '创建 工单系统',
          }),
        ],
        total: 45,
        page: 1,
        pageSize: 20,
      }),
    });

    expect(await screen.findByText('新增 上海电信')).toBeTruthy();
    for (const title of ['时间', '操作人', '操作', '对象', 'IP'])
      expect(screen.getByRole('columnheader', { name: title })).toBeTruthy();
    expect(within(row('新增 上海电信')).getByText('线路变更')).toBeTruthy();
    expect(within(row('新增 上海电信')).getByText('203.0.113.7')).toBeTruthy();
    expect(within(row('创建 工单系统')).getByText('API 密钥：CRM')).toBeTruthy();
    expect(screen.getByText('共 45 条，保留 180 天')).toBeTruthy();

    fireEvent.mouseDown(screen.getByRole('combobox', { name: '操作类型' }));
    fireEvent.click(await screen.findByTitle('退出登录'));
    fireEvent.change(screen.getByLabelText('操作人'), { target: { value: ' boss ' } });
    fireEvent.click(screen.getByRole('button', { name: '查询' }));
    await waitFor(() =>
      expect(requests.at(-1)?.config.params).toEqual({
        action: 'auth.logout',
        actor: 'boss',
        page: 1,
        pageSize: 20,
      }),
    );

    fireEvent.click(screen.getByTitle('3'));
    await waitFor(() =>
      expect(requests.at(-1)?.config.params).toMatchObject({ page: 3, action: 'auth.logout' }),
    );
    expect(screen.getByRole('button', { name: '导出' })).toBeTruthy();
    // Opening an antd select and paging render a lot: slow on a busy machine, not a hang.
  }, 60_000);

  it('shows a member only their own account events, and says so', async () => {
    const { requests } = renderAccount('/account-info?tab=audit-log', 'member', {
      'GET /api/user/audit-log': ok({
        items: [
          entry({
            action: 'auth.login',
            actionLabel: '登录',
            summary: '邮箱+密码登录，Chrome 120 · Windows',
          }),
        ],
        total: 1,
        page: 1,
        pageSize: 20,
      }),
    });

    expect(await screen.findByText('邮箱+密码登录，Chrome 120 · Windows')).toBeTruthy();
    expect(screen.getByText(/这里显示你自己账号的登录与安全事件/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: '导出' })).toBeNull();
    expect(screen.queryByLabelText('操作人')).toBeNull();
    expect(requests.some((r) => r.url.includes('/api/project/p1/audit-log'))).toBe(false);
  });
});

describe('登录设备', () => {
  const sessions = [
    {
      id: 'aaaaaaaaaaaaaaaa',
      device: 'Chrome 120 · Windows',
      userAgent: 'Mozilla/5.0',
      ip: '198.51.100.1',
      createdAt: '2026-03-01T02:00:00.000Z',
      lastSeenAt: '2026-03-02T02:00:00.000Z',
      current: true,
    },
    {
      id: 'bbbbbbbbbbbbbbbb',
      device: 'Safari 17 · iPhone',
      userAgent: 'Mozilla/5.0 (iPhone)',
      ip: '198.51.100.2',
      createdAt: '2026-02-20T02:00:00.000Z',
      lastSeenAt: '2026-02-21T02:00:00.000Z',
      current: false,
    },
  ];

  it('lists devices with the current one tagged and ends another after confirmation', async () => {
    const { requests } = renderAccount('/account-info?tab=sessions', 'member', {
      'GET /api/user/sessions': ok(sessions),
      'DELETE /api/user/sessions/bbbbbbbbbbbbbbbb': ok({ current: false }),
    });

    expect(await screen.findByText('Safari 17 · iPhone')).toBeTruthy();
    expect(within(row('Chrome 120 · Windows')).getByText('当前设备')).toBeTruthy();
    expect(within(row('Safari 17 · iPhone')).queryByText('当前设备')).toBeNull();
    expect(within(row('Safari 17 · iPhone')).getByText('198.51.100.2')).toBeTruthy();

    fireEvent.click(within(row('Safari 17 · iPhone')).getByRole('button', { name: '下线' }));
    expect(await screen.findByText('确定让该设备下线吗？')).toBeTruthy();
    expect(requests.some((r) => r.method === 'DELETE')).toBe(false);
    fireEvent.click(screen.getAllByRole('button', { name: '下线' }).at(-1)!);
    await waitFor(() =>
      expect(requests.some((r) => r.method === 'DELETE' && r.url.endsWith('/bbbbbbbbbbbbbbbb'))).toBe(true),
    );
    await waitFor(() => expect(requests.filter((r) => r.url === '/api/user/sessions')).toHaveLength(2));
  });

  it('ending this device logs out and goes to the login page', async () => {
    const { router } = renderAccount('/account-info?tab=sessions', 'member', {
      'GET /api/user/sessions': ok(sessions),
      'DELETE /api/user/sessions/aaaaaaaaaaaaaaaa': ok({ current: true }),
    });

    fireEvent.click(
      within(await screen.findByText('当前设备').then((el) => el.closest('tr')!)).getByRole('button', {
        name: '下线',
      }),
    );
    expect(await screen.findByText('下线当前设备将退出登录，确定吗？')).toBeTruthy();
    fireEvent.click(screen.getAllByRole('button', { name: '下线' }).at(-1)!);
    await waitFor(() => expect(router.state.location.pathname).toBe('/login'));
    expect(localStorage.getItem('token')).toBeNull();
  });
});
