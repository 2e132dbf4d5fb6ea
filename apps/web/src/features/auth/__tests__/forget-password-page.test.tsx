import { fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeReply, failure, ok, startFakeServer } from '@/test/fake-server';
import { renderRoute, routeKey } from '@/test/render-route';
import { ForgetPasswordPage } from '../pages/forget-password-page';

let server: ReturnType<typeof startFakeServer> | undefined;

afterEach(() => {
  server?.stop();
  server = undefined;
});

const codeSent = ok({ channel: 'email', resendAfterSeconds: 60, expiresInSeconds: 600 });

function renderPage(entry: string, replies: Record<string, FakeReply>) {
  server = startFakeServer((request) => replies[routeKey(request)] ?? failure(404, '请求地址出错'));
  const router = renderRoute(entry, { path: '/forget-password', element: <ForgetPasswordPage /> }, [
    '/login',
  ]);
  return { router, requests: server.requests };
}

const type = (label: string, value: string) =>
  fireEvent.change(screen.getByLabelText(label), { target: { value } });

describe('forget-password page', () => {
  it('walks through account, code, new password and back to login', async () => {
    const { router, requests } = renderPage('/forget-password', {
      'POST /api/user/send_code': codeSent,
      'GET /api/user/verify_code': ok({ valid: true }),
      'POST /api/user/reset_pwd': ok(null),
    });

    type('邮箱或手机号', 'owner@example.com');
    fireEvent.click(screen.getByRole('button', { name: '发送验证码' }));

    expect(await screen.findByText(/验证码已发送至 owner@example.com/)).toBeTruthy();
    expect(screen.getByRole('button', { name: /秒后重新发送/ }).hasAttribute('disabled')).toBe(true);
    type('验证码', '654321');
    fireEvent.click(screen.getByRole('button', { name: '下一步' }));

    expect(await screen.findByLabelText('新密码')).toBeTruthy();
    type('新密码', 'brand-new-1');
    type('确认新密码', 'brand-new-1');
    fireEvent.click(screen.getByRole('button', { name: '重置密码' }));

    expect(await screen.findByText('密码已重置')).toBeTruthy();
    expect(requests.map((r) => [r.method, r.url, r.body ?? r.config.params])).toEqual([
      ['POST', '/api/user/send_code', { target: 'owner@example.com' }],
      ['GET', '/api/user/verify_code', { target: 'owner@example.com', code: '654321' }],
      [
        'POST',
        '/api/user/reset_pwd',
        { target: 'owner@example.com', code: '654321', password: 'brand-new-1' },
      ],
    ]);

    fireEvent.click(screen.getByRole('button', { name: '返回登录' }));
    expect(await screen.findByText('page /login')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/login');
  });

  it('stays on the code step when the code is wrong', async () => {
    renderPage('/forget-password', {
      'POST /api/user/send_code': codeSent,
      'GET /api/user/verify_code': failure(400, '验证码错误或已过期', 'CODE_INVALID'),
    });

    type('邮箱或手机号', '13812345678');
    fireEvent.click(screen.getByRole('button', { name: '发送验证码' }));
    type(await screen.findByLabelText('验证码').then(() => '验证码'), '000000');
    fireEvent.click(screen.getByRole('button', { name: '下一步' }));

    expect(await screen.findByText('验证码错误或已过期')).toBeTruthy();
    expect(screen.queryByLabelText('新密码')).toBeNull();
  });

  it('sends a reset link by e-mail and says so without revealing whether the account exists', async () => {
    const { requests } = renderPage('/forget-password', { 'POST /auth/reset_password': ok(null) });

    type('邮箱或手机号', 'owner@example.com');
    fireEvent.click(screen.getByRole('button', { name: '通过邮件链接重置' }));

    expect(await screen.findByText(/如果 owner@example.com 已注册，重置链接已发送/)).toBeTruthy();
    expect(requests[0]?.body).toEqual({ email: 'owner@example.com' });
  });

  it('with a link token, shows only the new-password form and completes the reset', async () => {
    const token = 'a'.repeat(43);
    const { requests } = renderPage(`/forget-password?token=${token}`, {
      'POST /auth/reset_password_done': ok(null),
    });

    expect(screen.queryByLabelText('邮箱或手机号')).toBeNull();
    type('新密码', 'brand-new-1');
    type('确认新密码', 'brand-new-1');
    fireEvent.click(screen.getByRole('button', { name: '确认修改' }));

    expect(await screen.findByText('密码已重置')).toBeTruthy();
    expect(requests[0]?.body).toEqual({ token, password: 'brand-new-1' });
  });
});
