import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { toast } from 'sonner';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type FakeReply, failure, ok, startFakeServer } from '@/test/fake-server';
import { renderRoute, routeKey } from '@/test/render-route';
import { AccountInfoPage } from '../pages/account-info-page';

let server: ReturnType<typeof startFakeServer> | undefined;

beforeEach(() => {
  localStorage.setItem('token', 'tok-1');
  vi.spyOn(toast, 'error');
});

afterEach(() => {
  server?.stop();
  server = undefined;
});

const user = {
  isOwnerOrAdmin: true,
  id: 'u1',
  email: 'owner@example.com',
  displayName: '王小明',
  profile: '负责华东区外呼',
  projects: [
    {
      id: 'p1',
      name: '华东外呼项目',
      company: '示例公司',
      industry: '教育培训',
      disabled: false,
      role: 'owner',
    },
  ],
};

const limits = {
  assistantLimit: 3,
  knowledgeLimit: 0,
  ttsCloneLimit: 0,
  hasBalance: true,
  concurrentCallin: 2,
  concurrentCallout: 10,
};

const members = [
  {
    userId: 'u1',
    email: 'owner@example.com',
    displayName: '王小明',
    role: 'owner',
    joinedAt: '2026-01-05T02:00:00.000Z',
  },
  {
    userId: 'u2',
    email: 'agent@example.com',
    displayName: '坐席小李',
    role: 'member',
    joinedAt: '2026-02-01T02:00:00.000Z',
  },
];

function renderAccount(entry: string, replies: Record<string, FakeReply> = {}) {
  const defaults: Record<string, FakeReply> = {
    'GET /api/user/current': ok(user),
    'POST /api/project/p1/balance': ok({ balanceFen: 1234, hasBalance: true }),
    'GET /api/project/p1/balance-limit': ok(limits),
    'GET /api/project/p1/members': ok(members),
  };
  server = startFakeServer(
    (request) => ({ ...defaults, ...replies })[routeKey(request)] ?? failure(404, '请求地址出错'),
  );
  const router = renderRoute(entry, { path: '/account-info', element: <AccountInfoPage /> }, ['/login']);
  return { router, requests: server.requests };
}

const row = (label: string) => screen.getByText(label).closest('tr')!;

describe('account-info page', () => {
  it('shows the balance in yuan from fen and each limit, 未开通 for zero', async () => {
    renderAccount('/account-info?tab=balance');

    expect(await screen.findByText('¥12.34')).toBeTruthy();
    expect(within(row('智能小助手')).getByText('3 个')).toBeTruthy();
    expect(within(row('知识库')).getByText('未开通')).toBeTruthy();
    expect(within(row('声音克隆')).getByText('未开通')).toBeTruthy();
    expect(within(row('呼出并发')).getByText('10 路')).toBeTruthy();
  });

  it('shows every limit as 不限 when the project has no balance control', async () => {
    renderAccount('/account-info?tab=balance', {
      'GET /api/project/p1/balance-limit': ok({ ...limits, hasBalance: false }),
      'POST /api/project/p1/balance': ok({ balanceFen: 0, hasBalance: false }),
    });

    expect(await screen.findByText('¥0.00')).toBeTruthy();
    expect(screen.getAllByText('不限')).toHaveLength(5);
    expect(screen.queryByText('未开通')).toBeNull();
  });

  it('says the project is disabled in place, without an error toast', async () => {
    renderAccount('/account-info?tab=balance', {
      'POST /api/project/p1/balance': failure(403, 'Project is disabled', 'PROJECT_DISABLED'),
      'GET /api/project/p1/balance-limit': failure(403, 'Project is disabled', 'PROJECT_DISABLED'),
    });

    expect(await screen.findByText(/项目已停用/)).toBeTruthy();
    expect(toast.error).not.toHaveBeenCalled();
  });

  it('lists the members with their roles in Chinese', async () => {
    renderAccount('/account-info?tab=members');

    expect(await screen.findByText('坐席小李')).toBeTruthy();
    expect(within(row('坐席小李')).getByText('成员')).toBeTruthy();
    expect(within(row('agent@example.com')).getByText(/^2026-02-0[12] \d\d:00$/)).toBeTruthy();
    expect(within(row('owner@example.com')).getByText('所有者')).toBeTruthy();
  });

  it('saves the profile and refreshes the current user', async () => {
    const { requests } = renderAccount('/account-info', { 'PUT /api/profile': ok(null) });

    const name = await screen.findByLabelText('昵称');
    expect((name as HTMLInputElement).value).toBe('王小明');
    fireEvent.change(name, { target: { value: '王大明' } });
    fireEvent.change(screen.getByLabelText('简介'), { target: { value: '华东区负责人' } });
    fireEvent.click(screen.getByRole('button', { name: '保存' }));

    await waitFor(() => expect(requests.filter((r) => r.url === '/api/user/current')).toHaveLength(2));
    expect(requests.find((r) => r.url === '/api/profile')).toMatchObject({
      method: 'PUT',
      body: { displayName: '王大明', profile: '华东区负责人' },
    });
  });

  it('changes the password, or mails a link to do it', async () => {
    const { requests } = renderAccount('/account-info?tab=password', {
      'PUT /api/user/password': ok(null),
      'POST /api/user/send_change_pwd_email': ok(null),
    });

    fireEvent.change(await screen.findByLabelText('当前密码'), { target: { value: 'old-pass-1' } });
    fireEvent.change(screen.getByLabelText('新密码'), { target: { value: 'new-pass-2' } });
    fireEvent.change(screen.getByLabelText('确认新密码'), { target: { value: 'new-pass-2' } });
    fireEvent.click(screen.getByRole('button', { name: '修改密码' }));
    await waitFor(() =>
      expect(requests.find((r) => r.url === '/api/user/password')?.body).toEqual({
        oldPassword: 'old-pass-1',
        password: 'new-pass-2',
      }),
    );

    fireEvent.click(screen.getByRole('button', { name: '通过邮件修改' }));
    await waitFor(() => expect(requests.some((r) => r.url === '/api/user/send_change_pwd_email')).toBe(true));
  });
});
