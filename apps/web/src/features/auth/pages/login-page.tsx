import type { LoginRequest } from '@callpilot/contracts';
import { Button, Form, Input } from 'antd';
import { useNavigate, useSearchParams } from 'react-router';
import { paths } from '@/config/paths';
import { useLogin } from '../api/login';

/**
 * Only same-origin paths: `//host` and `/\host` are read by browsers as another origin, which
 * would turn the login page into an open redirect.
 */
function safeRedirect(target: string | null): string {
  if (!target?.startsWith('/') || target.startsWith('//') || target.startsWith('/\\')) {
    return paths.dashboard;
  }
  return target;
}

export function LoginPage() {
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const loginMutation = useLogin({
    onSuccess: () => {
      navigate(safeRedirect(searchParams.get('redirect')), { replace: true });
    },
  });

  return (
    <main className="flex min-h-full items-center justify-center bg-gray-50 px-4">
      <div className="w-full max-w-sm rounded-lg bg-white p-8 shadow-sm">
        <h1 className="mb-1 text-center text-2xl font-semibold text-gray-900">智能语音外呼平台</h1>
        <p className="mb-8 text-center text-sm text-gray-500">登录您的账户</p>
        <Form<LoginRequest>
          name="login"
          layout="vertical"
          requiredMark={false}
          disabled={loginMutation.isPending}
          onFinish={(values) => loginMutation.mutate(values)}
        >
          <Form.Item
            label="邮箱"
            name="email"
            rules={[
              { required: true, message: '请输入邮箱' },
              { type: 'email', message: '邮箱格式不正确' },
            ]}
          >
            <Input autoComplete="email" placeholder="name@example.com" />
          </Form.Item>
          <Form.Item label="密码" name="password" rules={[{ required: true, message: '请输入密码' }]}>
            <Input.Password autoComplete="current-password" />
          </Form.Item>
          <Button type="primary" htmlType="submit" block loading={loginMutation.isPending}>
            登录
          </Button>
        </Form>
      </div>
    </main>
  );
}
