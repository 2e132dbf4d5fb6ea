import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeReply, failure, ok, startFakeServer } from '@/test/fake-server';
import { renderRoute, routeKey } from '@/test/render-route';
import { LoginPage } from '../pages/login-page';

let server: ReturnType<typeof startFakeServer> | undefined;

afterEach(() => {
  server?.stop();
  server = undefined;
});

const session = { token: 'tok-abc', expiresAt: '2030-01-01T00:00:00.000Z' };
const oidcOff = ok({ enabled: false, name: '' });

function renderLogin(entry: string, replies: Record<string, FakeReply> = {}) {
  server = startFakeServer(
    (request) =>
      replies[routeKey(request)] ??
      (routeKey(request) === 'GET /auth/oidc/config' ? oidcOff : failure(404, '请求地址出错')),
  );
  const router = renderRoute(entry, { path: '/login', element: <LoginPage /> }, [
    '/dashboard',
    '/call-task/list',
    '/account-info',
  ]);
  const logins = () => server!.requests.filter((r) => r.url === '/auth/login');
  return { router, requests: server.requests, logins };
}

function submitPassword(account: string, password: string) {
  fireEvent.change(screen.getByLabelText('邮箱/手机号'), { target: { value: account } });
  fireEvent.change(screen.getByLabelText('密码'), { target: { value: password } });
  fireEvent.click(screen.getByRole('button', { name: '登录' }));
}

describe('login page: password', () => {
  it('signs in by e-mail, stores the token and returns to the redirect path with its query', async () => {
    const { router, logins } = renderLogin(
      `/login?redirect=${encodeURIComponent('/call-task/list?page=2')}`,
      {
        'POST /auth/login': ok(session),
      },
    );

    submitPassword('owner@example.com', 'secret-pass');

    expect(await screen.findByText('page /call-task/list')).toBeTruthy();
    expect(router.state.location.search).toBe('?page=2');
    expect(localStorage.getItem('token')).toBe('tok-abc');
    expect(logins()).toHaveLength(1);
    expect(logins()[0]?.body).toEqual({ email: 'owner@example.com', password: 'secret-pass' });
    expect(logins()[0]?.headers.Authorization).toBeUndefined();
  });

  it.each([
    ['13812345678', '13812345678'],
    ['+86 138 1234 5678', '13812345678'],
  ])('sends a mobile number (%s) as {phone, password}', async (typed, phone) => {
    const { logins } = renderLogin('/login', { 'POST /auth/login': ok(session) });

    submitPassword(typed, 'secret-pass');

    expect(await screen.findByText('page /dashboard')).toBeTruthy();
    expect(logins()[0]?.body).toEqual({ phone, password: 'secret-pass' });
  });

  it.each([
    ['another origin', `/login?redirect=${encodeURIComponent('//evil.example/x')}`],
    ['an absolute URL', `/login?redirect=${encodeURIComponent('https://evil.example/')}`],
  ])('goes to the dashboard when the redirect is %s', async (_, entry) => {
    renderLogin(entry, { 'POST /auth/login': ok(session) });

    submitPassword('owner@example.com', 'secret-pass');

    expect(await screen.findByText('page /dashboard')).toBeTruthy();
  });

  it('asks for the missing or malformed fields instead of calling the server', async () => {
    const { logins } = renderLogin('/login');

    fireEvent.click(screen.getByRole('button', { name: '登录' }));
    expect(await screen.findByText('请输入邮箱或手机号')).toBeTruthy();
    expect(await screen.findByText('请输入密码')).toBeTruthy();

    submitPassword('12345', 'secret-pass');
    expect(await screen.findByText('请输入正确的邮箱或手机号')).toBeTruthy();
    expect(logins()).toHaveLength(0);
  });

  it("shows the server's message on wrong credentials and stays on the page", async () => {
    const { router } = renderLogin('/login', {
      'POST /auth/login': failure(401, '账号或密码错误', 'INVALID_CREDENTIALS'),
    });

    submitPassword('owner@example.com', 'wrong-pass');

    expect(await screen.findByText('账号或密码错误')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/login');
    expect(localStorage.getItem('token')).toBeNull();
  });

  it('links to sign-up and the forgotten-password flow', () => {
    renderLogin('/login');

    expect(screen.getByRole('link', { name: '注册账号' }).getAttribute('href')).toBe('/signup');
    expect(screen.getByRole('link', { name: '忘记密码' }).getAttribute('href')).toBe('/forget-password');
  });
});

describe('login page: SMS code', () => {
  it('sends the code, counts down before a resend, then logs in with {phone, code}', async () => {
    const { requests, logins } = renderLogin(`/login?redirect=${encodeURIComponent('/account-info')}`, {
      'POST /auth/sms-captcha': ok({ channel: 'sms', resendAfterSeconds: 60, expiresInSeconds: 600 }),
      'POST /auth/login': ok(session),
    });
    fireEvent.click(screen.getByRole('tab', { name: '验证码登录' }));
    const codeForm = (await screen.findByLabelText('手机号')).closest('form')!;

    fireEvent.click(within(codeForm).getByRole('button', { name: '获取验证码' }));
    expect(await within(codeForm).findByText('请输入手机号')).toBeTruthy();

    fireEvent.change(screen.getByLabelText('手机号'), { target: { value: '+8613812345678' } });
    fireEvent.click(within(codeForm).getByRole('button', { name: '获取验证码' }));

    const resend = await within(codeForm).findByRole('button', { name: /秒后重新获取/ });
    expect(resend.textContent).toMatch(/^(60|59) 秒后重新获取$/);
    expect(resend.hasAttribute('disabled')).toBe(true);
    expect(requests.find((r) => r.url === '/auth/sms-captcha')?.body).toEqual({ phone: '13812345678' });

    fireEvent.change(screen.getByLabelText('验证码'), { target: { value: '123456' } });
    fireEvent.click(within(codeForm).getByRole('button', { name: '登录' }));

    expect(await screen.findByText('page /account-info')).toBeTruthy();
    expect(logins()[0]?.body).toEqual({ phone: '13812345678', code: '123456' });
  });
});

describe('login page: third-party login', () => {
  it('offers the provider when enabled and starts its flow with the redirect', async () => {
    const { requests } = renderLogin(`/login?redirect=${encodeURIComponent('/account-info?tab=members')}`, {
      'GET /auth/oidc/config': ok({ enabled: true, name: '企业微信' }),
      // A failing start keeps jsdom from attempting a real navigation; the request is what counts.
      'GET /auth/oidc/start': failure(503, '第三方登录暂不可用'),
    });

    fireEvent.click(await screen.findByRole('button', { name: '使用企业微信登录' }));

    await waitFor(() => expect(requests.some((r) => r.url === '/auth/oidc/start')).toBe(true));
    expect(requests.find((r) => r.url === '/auth/oidc/start')?.config.params).toEqual({
      redirect: '/account-info?tab=members',
    });
    expect(await screen.findByText('第三方登录暂不可用')).toBeTruthy();
  });

  it('shows no provider button when third-party login is off', async () => {
    const { requests } = renderLogin('/login');

    await waitFor(() => expect(requests.some((r) => r.url === '/auth/oidc/config')).toBe(true));
    expect(screen.queryByRole('button', { name: /^使用.*登录$/ })).toBeNull();
  });
});
