import type { ProjectRole } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeReply, failure, ok, startFakeServer } from '@/test/fake-server';
import { renderRoute, routeKey } from '@/test/render-route';
import { AccountInfoPage } from '../pages/account-info-page';
import { InvitePage } from '../pages/invite-page';

let server: ReturnType<typeof startFakeServer> | undefined;

beforeEach(() => {
  localStorage.setItem('token', 'tok-1');
});
afterEach(() => {
  server?.stop();
  server = undefined;
  localStorage.clear();
});

const userAs = (role: ProjectRole) => ({
  isOwnerOrAdmin: role === 'owner' || role === 'admin',
  id: 'u1',
  email: 'me@example.com',
  displayName: '我',
  profile: '',
  role,
  projects: [{ id: 'p1', name: '华东外呼项目', company: '', industry: '', disabled: false, role }],
});

const members = [
  {
    userId: 'u0',
    email: 'boss@example.com',
    displayName: '老板',
    role: 'owner',
    joinedAt: '2026-01-01T02:00:00.000Z',
  },
  {
    userId: 'u1',
    email: 'me@example.com',
    displayName: '我',
    role: 'admin',
    joinedAt: '2026-01-02T02:00:00.000Z',
  },
  {
    userId: 'u2',
    email: 'agent@example.com',
    displayName: '坐席小李',
    role: 'member',
    joinedAt: '2026-02-01T02:00:00.000Z',
  },
];

const invitation = {
  id: 'inv1',
  email: 'pending@example.com',
  role: 'readonly',
  invitedBy: 'me@example.com',
  createdAt: '2026-03-01T02:00:00.000Z',
  expiresAt: '2026-03-08T02:00:00.000Z',
};

function renderMembers(role: ProjectRole, replies: Record<string, FakeReply> = {}) {
  const defaults: Record<string, FakeReply> = {
    'GET /api/user/current': ok(userAs(role)),
    'GET /api/project/p1/members': ok(members),
    'GET /api/project/p1/invitations': ok([invitation]),
  };
  server = startFakeServer(
    (request) => ({ ...defaults, ...replies })[routeKey(request)] ?? failure(404, '请求地址出错'),
  );
  renderRoute('/account-info?tab=members', { path: '/account-info', element: <AccountInfoPage /> });
  return server.requests;
}

const row = (text: string) => screen.getByText(text).closest('tr') as HTMLElement;

describe('成员管理', () => {
  it('lets an admin change a member, but not an owner, and lists pending invitations', async () => {
    const requests = renderMembers('admin', { 'PUT /api/project/p1/members/u2': ok(null) });

    expect(await screen.findByText('坐席小李', {}, { timeout: 5000 })).toBeTruthy();
    // The owner's row is plain text for an admin; the member's row has a role select and 移除.
    expect(within(row('boss@example.com')).getByText('所有者')).toBeTruthy();
    expect(within(row('boss@example.com')).queryByRole('combobox')).toBeNull();
    expect(within(row('boss@example.com')).queryByRole('button', { name: '移除' })).toBeNull();
    expect(within(row('agent@example.com')).getByRole('button', { name: '移除' })).toBeTruthy();

    const select = within(row('agent@example.com')).getByRole('combobox', {
      name: 'agent@example.com 的角色',
    });
    fireEvent.mouseDown(select);
    // An admin cannot make an owner.
    expect(screen.queryByTitle('所有者')).toBeNull();
    fireEvent.click(await screen.findByTitle('只读'));
    await waitFor(() =>
      expect(requests.find((r) => r.method === 'PUT')).toMatchObject({
        url: '/api/project/p1/members/u2',
        body: { role: 'readonly' },
      }),
    );

    expect(await screen.findByText('pending@example.com')).toBeTruthy();
    expect(within(row('pending@example.com')).getByRole('button', { name: '复制链接' })).toBeTruthy();
    expect(within(row('pending@example.com')).getByRole('button', { name: '撤销' })).toBeTruthy();
  });

  it('invites by e-mail with a role and shows the link to copy', async () => {
    const requests = renderMembers('owner', {
      'POST /api/project/p1/invitations': ok({
        ...invitation,
        email: 'new@example.com',
        role: 'member',
        link: 'http://localhost/invite/abc',
      }),
    });

    fireEvent.click(await screen.findByRole('button', { name: '邀请成员' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: '发送邀请' }));
    expect(await within(dialog).findByText('请输入邮箱')).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('邮箱'), { target: { value: 'new@example.com' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '发送邀请' }));

    expect(await within(dialog).findByText('已向 new@example.com 发送邀请邮件')).toBeTruthy();
    expect((within(dialog).getByLabelText('邀请链接') as HTMLInputElement).value).toBe(
      'http://localhost/invite/abc',
    );
    expect(requests.find((r) => r.method === 'POST')?.body).toEqual({
      email: 'new@example.com',
      role: 'member',
    });
  });

  it('shows a read-only member the list and nothing to change', async () => {
    const requests = renderMembers('readonly');

    expect(await screen.findByText('坐席小李', {}, { timeout: 5000 })).toBeTruthy();
    expect(screen.getByText(/只读成员可以查看项目的全部内容/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: '邀请成员' })).toBeNull();
    expect(screen.queryByRole('button', { name: '移除' })).toBeNull();
    expect(screen.queryByRole('combobox')).toBeNull();
    expect(screen.queryByText('待接受的邀请')).toBeNull();
    expect(requests.some((r) => r.url.endsWith('/invitations'))).toBe(false);
    // Leaving stays possible.
    expect(screen.getByRole('button', { name: '退出项目' })).toBeTruthy();
  });
});

describe('/invite/:token', () => {
  const preview = {
    projectName: '华东外呼项目',
    role: 'member',
    email: 'n***@example.com',
    invitedBy: '老板',
    expiresAt: '2026-03-08T02:00:00.000Z',
    status: 'pending',
  };
  const TOKEN = 'tok_abcdefghijklmnopqrstuvwxyz';

  function renderInvite(replies: Record<string, FakeReply>) {
    server = startFakeServer((request) => replies[routeKey(request)] ?? failure(404, '请求地址出错'));
    renderRoute(`/invite/${TOKEN}`, { path: '/invite/:token', element: <InvitePage /> }, [
      '/dashboard',
      '/login',
    ]);
    return server.requests;
  }

  it('shows the project and role, and accepts', async () => {
    const requests = renderInvite({
      [`GET /api/invitations/${TOKEN}`]: ok(preview),
      [`POST /api/invitations/${TOKEN}/accept`]: ok({
        projectId: 'p1',
        projectName: '华东外呼项目',
        role: 'member',
      }),
    });
    expect(await screen.findByText('老板 邀请你加入项目「华东外呼项目」')).toBeTruthy();
    expect(screen.getByText('角色：成员')).toBeTruthy();
    expect(screen.getByText('受邀邮箱：n***@example.com')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: '接受邀请' }));
    expect(await screen.findByText('已加入项目「华东外呼项目」')).toBeTruthy();
    expect(requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('says why a link cannot be used', async () => {
    renderInvite({
      [`GET /api/invitations/${TOKEN}`]: ok(preview),
      [`POST /api/invitations/${TOKEN}/accept`]: failure(
        403,
        '该邀请发给 n***@example.com，请使用该邮箱的账号登录后接受',
      ),
    });
    fireEvent.click(await screen.findByRole('button', { name: '接受邀请' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      '该邀请发给 n***@example.com，请使用该邮箱的账号登录后接受',
    );
  });

  it.each([
    ['expired', '邀请已过期'],
    ['accepted', '邀请已被使用'],
    ['revoked', '邀请已被撤销'],
  ])('shows a %s invitation as closed', async (status, title) => {
    renderInvite({ [`GET /api/invitations/${TOKEN}`]: ok({ ...preview, status }) });
    expect(await screen.findByText(title)).toBeTruthy();
    expect(screen.queryByRole('button', { name: '接受邀请' })).toBeNull();
  });

  it('asks a visitor without a session to log in first', async () => {
    localStorage.clear();
    renderInvite({ [`GET /api/invitations/${TOKEN}`]: ok(preview) });
    expect(await screen.findByRole('button', { name: '登录后接受' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: '接受邀请' })).toBeNull();
  });
});
