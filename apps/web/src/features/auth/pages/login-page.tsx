import { Button, Divider, Form, Input, Tabs } from 'antd';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { paths } from '@/config/paths';
import { safeRedirect } from '@/lib/safe-redirect';
import { useOidcConfig } from '../api/get-oidc-config';
import { useLogin } from '../api/login';
import { useSendSmsCaptcha } from '../api/send-sms-captcha';
import { useStartOidcLogin } from '../api/start-oidc-login';
import { AuthCard } from '../components/auth-card';
import { useCountdown } from '../hooks/use-countdown';
import { isMobile, normalizeMobile, parseIdentifier } from '../utils/auth-identifier';

const DEFAULT_RESEND_SECONDS = 60;

type PasswordForm = { account: string; password: string };
type CodeForm = { phone: string; code: string };

function PasswordLoginForm({
  onLogin,
  pending,
}: {
  onLogin: (values: PasswordForm) => void;
  pending: boolean;
}) {
  return (
    <Form<PasswordForm>
      name="password-login"
      layout="vertical"
      requiredMark={false}
      disabled={pending}
      onFinish={onLogin}
    >
      <Form.Item
        label="邮箱/手机号"
        name="account"
        rules={[
          { required: true, whitespace: true, message: '请输入邮箱或手机号' },
          {
            validator: async (_, value: string | undefined) => {
              if (value?.trim() && !parseIdentifier(value)) throw new Error('请输入正确的邮箱或手机号');
            },
          },
        ]}
      >
        <Input autoComplete="username" placeholder="name@example.com 或 手机号" />
      </Form.Item>
      <Form.Item label="密码" name="password" rules={[{ required: true, message: '请输入密码' }]}>
        <Input.Password autoComplete="current-password" />
      </Form.Item>
      <Button type="primary" htmlType="submit" block loading={pending}>
        登录
      </Button>
    </Form>
  );
}

function CodeLoginForm({ onLogin, pending }: { onLogin: (values: CodeForm) => void; pending: boolean }) {
  const [form] = Form.useForm<CodeForm>();
  const countdown = useCountdown();
  const sendCaptcha = useSendSmsCaptcha({
    onSuccess: (sent) => countdown.start(sent.resendAfterSeconds || DEFAULT_RESEND_SECONDS),
  });

  const requestCode = async () => {
    // Only the phone field is checked here: the code is what the visitor is about to receive.
    const { phone } = await form.validateFields(['phone']).catch(() => ({ phone: undefined }));
    if (phone) sendCaptcha.mutate({ phone: normalizeMobile(phone) });
  };

  return (
    <Form<CodeForm>
      form={form}
      name="code-login"
      layout="vertical"
      requiredMark={false}
      disabled={pending}
      onFinish={onLogin}
    >
      <Form.Item
        label="手机号"
        name="phone"
        rules={[
          { required: true, whitespace: true, message: '请输入手机号' },
          {
            validator: async (_, value: string | undefined) => {
              if (value?.trim() && !isMobile(value)) throw new Error('手机号格式不正确');
            },
          },
        ]}
      >
        <Input autoComplete="tel" inputMode="tel" />
      </Form.Item>
      <Form.Item label="验证码" required={false}>
        <div className="flex gap-2">
          <Form.Item
            name="code"
            noStyle
            rules={[
              { required: true, message: '请输入验证码' },
              { pattern: /^\d{6}$/, message: '验证码为 6 位数字' },
            ]}
          >
            <Input aria-label="验证码" autoComplete="one-time-code" inputMode="numeric" maxLength={6} />
          </Form.Item>
          <Button
            className="shrink-0"
            onClick={requestCode}
            loading={sendCaptcha.isPending}
            disabled={countdown.running}
          >
            {countdown.running ? `${countdown.secondsLeft} 秒后重新获取` : '获取验证码'}
          </Button>
        </div>
      </Form.Item>
      <Button type="primary" htmlType="submit" block loading={pending}>
        登录
      </Button>
    </Form>
  );
}

export function LoginPage() {
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const redirect = safeRedirect(searchParams.get('redirect'));
  const loginMutation = useLogin({ onSuccess: () => navigate(redirect, { replace: true }) });
  const oidcConfig = useOidcConfig();
  const startOidc = useStartOidcLogin();

  const loginWithPassword = ({ account, password }: PasswordForm) => {
    const identifier = parseIdentifier(account);
    if (identifier) loginMutation.mutate({ ...identifier, password });
  };
  const loginWithCode = ({ phone, code }: CodeForm) => {
    loginMutation.mutate({ phone: normalizeMobile(phone), code });
  };

  return (
    <AuthCard subtitle="登录您的账户">
      <Tabs
        centered
        items={[
          {
            key: 'password',
            label: '密码登录',
            children: <PasswordLoginForm onLogin={loginWithPassword} pending={loginMutation.isPending} />,
          },
          {
            key: 'code',
            label: '验证码登录',
            children: <CodeLoginForm onLogin={loginWithCode} pending={loginMutation.isPending} />,
          },
        ]}
      />
      <div className="mt-4 flex justify-between text-sm">
        <Link to={paths.signup}>注册账号</Link>
        <Link to={paths.forgetPassword}>忘记密码</Link>
      </div>
      {oidcConfig.data?.enabled && (
        <>
          <Divider plain className="text-xs text-gray-400">
            或
          </Divider>
          <Button block loading={startOidc.isPending} onClick={() => startOidc.mutate(redirect)}>
            {`使用${oidcConfig.data.name}登录`}
          </Button>
        </>
      )}
    </AuthCard>
  );
}
