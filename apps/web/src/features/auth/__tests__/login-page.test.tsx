import { fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it } from 'vitest';
import { AppProvider } from '@/app/provider';
import { type FakeReply, failure, ok, startFakeServer } from '@/test/fake-server';
import { LoginPage } from '../pages/login-page';

let server: ReturnType<typeof startFakeServer> | undefined;

afterEach(() => {
  server?.stop();
  server = undefined;
});

function renderLogin(entry: string, reply: FakeReply) {
  server = startFakeServer(() => reply);
  const router = createMemoryRouter(
    [
      { path: '/login', Component: LoginPage },
      { path: '/dashboard', element: <p>dashboard page</p> },
      { path: '/call-task/list', element: <p>call task list</p> },
    ],
    { initialEntries: [entry] },
  );
  render(
    <AppProvider>
      <RouterProvider router={router} />
    </AppProvider>,
  );
  return { router, requests: server.requests };
}

function submit(email: string, password: string) {
  fireEvent.change(screen.getByLabelText('邮箱'), { target: { value: email } });
  fireEvent.change(screen.getByLabelText('密码'), { target: { value: password } });
  fireEvent.click(screen.getByRole('button', { name: '登录' }));
}

const session = { token: 'tok-abc', expiresAt: '2030-01-01T00:00:00.000Z' };

describe('login page', () => {
  it('signs in, stores the token and returns to the redirect path with its query', async () => {
    const { router, requests } = renderLogin(
      `/login?redirect=${encodeURIComponent('/call-task/list?page=2')}`,
      ok(session),
    );

    submit('owner@example.com', 'secret-pass');

    expect(await screen.findByText('call task list')).toBeTruthy();
    expect(router.state.location.search).toBe('?page=2');
    expect(localStorage.getItem('token')).toBe('tok-abc');
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      method: 'POST',
      url: '/auth/login',
      body: { email: 'owner@example.com', password: 'secret-pass' },
    });
  });

  it.each([
    ['no redirect', '/login'],
    ['another origin', `/login?redirect=${encodeURIComponent('//evil.example/x')}`],
    ['an absolute URL', `/login?redirect=${encodeURIComponent('https://evil.example/')}`],
  ])('goes to the dashboard when given %s', async (_, entry) => {
    renderLogin(entry, ok(session));

    submit('owner@example.com', 'secret-pass');

    expect(await screen.findByText('dashboard page')).toBeTruthy();
  });

  it('asks for the missing fields instead of calling the server', async () => {
    const { requests } = renderLogin('/login', ok(session));

    fireEvent.click(screen.getByRole('button', { name: '登录' }));

    expect(await screen.findByText('请输入邮箱')).toBeTruthy();
    expect(await screen.findByText('请输入密码')).toBeTruthy();
    expect(requests).toHaveLength(0);
  });

  it("shows the server's message on wrong credentials and stays on the page", async () => {
    const { router } = renderLogin('/login', failure(401, '邮箱或密码错误', 'INVALID_CREDENTIALS'));

    submit('owner@example.com', 'wrong-pass');

    expect(await screen.findByText('邮箱或密码错误')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/login');
    expect(localStorage.getItem('token')).toBeNull();
  });
});
