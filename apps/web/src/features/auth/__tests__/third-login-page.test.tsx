import { fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeReply, failure, ok, startFakeServer } from '@/test/fake-server';
import { renderRoute } from '@/test/render-route';
import { ThirdLoginPage } from '../pages/third-login-page';

let server: ReturnType<typeof startFakeServer> | undefined;

afterEach(() => {
  server?.stop();
  server = undefined;
});

function renderCallback(entry: string, reply: FakeReply) {
  server = startFakeServer(() => reply);
  const router = renderRoute(entry, { path: '/third-login', element: <ThirdLoginPage /> }, [
    '/dashboard',
    '/login',
    '/account-info',
  ]);
  return { router, requests: server.requests };
}

const result = (redirect: string) =>
  ok({ token: 'tok-oidc', expiresAt: '2030-01-01T00:00:00.000Z', redirect });

describe('third-login page', () => {
  it('trades the code once for a session, stores the token and goes where the user was going', async () => {
    const { router, requests } = renderCallback(
      '/third-login?code=abc&state=xyz',
      result('/account-info?tab=members'),
    );

    expect(screen.getByText('正在登录...')).toBeTruthy();
    expect(await screen.findByText('page /account-info')).toBeTruthy();
    expect(router.state.location.search).toBe('?tab=members');
    expect(localStorage.getItem('token')).toBe('tok-oidc');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      method: 'POST',
      url: '/auth/oidc/callback',
      body: { code: 'abc', state: 'xyz' },
    });
  });

  it('ignores an off-site redirect and opens the dashboard', async () => {
    renderCallback('/third-login?code=abc&state=xyz', result('//evil.example/'));

    expect(await screen.findByText('page /dashboard')).toBeTruthy();
  });

  it("shows the server's reason and a way back when the exchange fails", async () => {
    const { router } = renderCallback(
      '/third-login?code=abc&state=xyz',
      failure(400, '登录请求已过期，请重新登录', 'BAD_REQUEST'),
    );

    expect(await screen.findByText('登录请求已过期，请重新登录')).toBeTruthy();
    expect(localStorage.getItem('token')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: '返回登录' }));
    expect(await screen.findByText('page /login')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/login');
  });

  it("shows the provider's error without calling the server", async () => {
    const { requests } = renderCallback(
      '/third-login?error=access_denied&error_description=用户取消了授权',
      result('/dashboard'),
    );

    expect(await screen.findByText('用户取消了授权')).toBeTruthy();
    expect(screen.getByRole('button', { name: '返回登录' })).toBeTruthy();
    expect(requests).toHaveLength(0);
  });
});
