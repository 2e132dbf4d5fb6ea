import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeReply, failure, ok, startFakeServer } from '@/test/fake-server';
import { renderRoute, routeKey } from '@/test/render-route';
import { SignupPage } from '../pages/signup-page';

let server: ReturnType<typeof startFakeServer> | undefined;

afterEach(() => {
  server?.stop();
  server = undefined;
});

const session = { token: 'tok-new', expiresAt: '2030-01-01T00:00:00.000Z' };
const userWithoutProject = {
  isOwnerOrAdmin: false,
  id: 'u9',
  email: 'new@example.com',
  displayName: '李雷',
  profile: '',
  projects: [],
};

function renderSignup(replies: Record<string, FakeReply>, entry = '/signup') {
  server = startFakeServer((request) => replies[routeKey(request)] ?? failure(404, '请求地址出错'));
  const router = renderRoute(entry, { path: '/signup', element: <SignupPage /> }, [
    '/dashboard',
    '/login',
    '/invite/:token',
  ]);
  return { router, requests: server.requests };
}

const type = (label: string, value: string) =>
  fireEvent.change(screen.getByLabelText(label), { target: { value } });

/** Step 1 filled in correctly and submitted. */
function fillAccount() {
  type('邮箱', 'new@example.com');
  type('昵称', '李雷');
  type('密码', 'abcdefg1');
  type('确认密码', 'abcdefg1');
  fireEvent.click(screen.getByRole('button', { name: '下一步' }));
}

async function chooseIndustry(industry: string) {
  fireEvent.mouseDown(screen.getByRole('combobox'));
  fireEvent.click(await screen.findByTitle(industry));
}

describe('sign-up page', () => {
  it('creates the account, then the project, then opens the console', async () => {
    const { router, requests } = renderSignup({
      'POST /auth/register': ok(session),
      'PUT /api/project/register': ok({
        id: 'p9',
        name: '华南外呼',
        company: '示例科技',
        industry: '教育培训',
      }),
    });

    fillAccount();

    expect(await screen.findByLabelText('项目名称')).toBeTruthy();
    expect(localStorage.getItem('token')).toBe('tok-new');
    expect(requests[0]?.body).toEqual({
      email: 'new@example.com',
      password: 'abcdefg1',
      displayName: '李雷',
    });

    type('项目名称', '华南外呼');
    type('公司名称', '示例科技');
    await chooseIndustry('教育培训');
    fireEvent.click(screen.getByRole('button', { name: '完成并进入控制台' }));

    expect(await screen.findByText('page /dashboard')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/dashboard');
    const projectCall = requests.find((r) => r.url === '/api/project/register');
    expect(projectCall?.method).toBe('PUT');
    expect(projectCall?.body).toEqual({ name: '华南外呼', company: '示例科技', industry: '教育培训' });
    expect(projectCall?.headers.Authorization).toBe('Bearer tok-new');
  });

  it('holds a weak or mismatched password back before calling the server', async () => {
    const { requests } = renderSignup({});

    type('邮箱', 'new@example.com');
    type('昵称', '李雷');
    type('密码', 'abcdefgh');
    type('确认密码', 'abcdefgX');
    fireEvent.click(screen.getByRole('button', { name: '下一步' }));

    expect(await screen.findByText('密码须同时包含字母和数字')).toBeTruthy();
    expect(await screen.findByText('两次输入的密码不一致')).toBeTruthy();
    expect(requests).toHaveLength(0);
  });

  it('resumes at the project step after a refresh by a signed-in user without a project', async () => {
    localStorage.setItem('token', 'tok-new');
    renderSignup({ 'GET /api/user/current': ok(userWithoutProject) });

    expect(await screen.findByLabelText('项目名称')).toBeTruthy();
    expect(screen.queryByLabelText('确认密码')).toBeNull();
  });

  it('starts over quietly when the stored token has expired', async () => {
    localStorage.setItem('token', 'stale');
    const { router } = renderSignup({ 'GET /api/user/current': failure(401, '令牌无效', 'UNAUTHORIZED') });

    expect(await screen.findByLabelText('确认密码')).toBeTruthy();
    await waitFor(() => expect(localStorage.getItem('token')).toBeNull());
    expect(screen.queryByText('未登录或登录已过期')).toBeNull();
    expect(router.state.location.pathname).toBe('/signup');
  });

  it('goes back to the invitation once the account exists, without asking for a project', async () => {
    const { router, requests } = renderSignup(
      { 'POST /auth/register': ok(session) },
      `/signup?redirect=${encodeURIComponent('/invite/tok-abc')}`,
    );

    expect(screen.queryByText('注册项目')).toBeNull();
    expect(screen.getByRole('link', { name: '去登录' }).getAttribute('href')).toBe(
      `/login?redirect=${encodeURIComponent('/invite/tok-abc')}`,
    );
    fillAccount();

    expect(await screen.findByText('page /invite/:token')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/invite/tok-abc');
    expect(localStorage.getItem('token')).toBe('tok-new');
    expect(requests.some((r) => r.url === '/api/project/register')).toBe(false);
  });

  it('ignores a redirect to another site and asks for the project as usual', async () => {
    renderSignup(
      { 'POST /auth/register': ok(session) },
      `/signup?redirect=${encodeURIComponent('//evil.example/')}`,
    );

    fillAccount();

    expect(await screen.findByLabelText('项目名称')).toBeTruthy();
  });
});
