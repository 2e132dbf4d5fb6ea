import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { paths } from '@/config/paths';
import { safeRedirect } from '@/lib/safe-redirect';
import { useOidcConfig } from '../api/get-oidc-config';
import { useLogin } from '../api/login';
import { useSendSmsCaptcha } from '../api/send-sms-captcha';
import { useStartOidcLogin } from '../api/start-oidc-login';
import { AuthCard } from '../components/auth-card';
import { ActionButton, Field, PasswordInput, TextInput, useLoginForm } from '../components/login-fields';
import { useCountdown } from '../hooks/use-countdown';
import { isMobile, normalizeMobile, parseIdentifier } from '../utils/auth-identifier';

const DEFAULT_RESEND_SECONDS = 60;

type PasswordForm = { account: string; password: string };
type CodeForm = { phone: string; code: string };

const passwordRules = {
  account: [
    (v: string) => (v.trim() ? undefined : '请输入邮箱或手机号'),
    (v: string) => (parseIdentifier(v) ? undefined : '请输入正确的邮箱或手机号'),
  ],
  password: [(v: string) => (v ? undefined : '请输入密码')],
};

const codeRules = {
  phone: [
    (v: string) => (v.trim() ? undefined : '请输入手机号'),
    (v: string) => (isMobile(v) ? undefined : '手机号格式不正确'),
  ],
  code: [
    (v: string) => (v ? undefined : '请输入验证码'),
    (v: string) => (/^\d{6}$/.test(v) ? undefined : '验证码为 6 位数字'),
  ],
};

function PasswordLoginForm({
  onLogin,
  pending,
}: {
  onLogin: (values: PasswordForm) => void;
  pending: boolean;
}) {
  const form = useLoginForm(passwordRules);
  return (
    <form
      name="password-login"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (form.validate()) onLogin(form.values);
      }}
    >
      <Field label="邮箱/手机号" error={form.errors.account}>
        {({ id, invalid, describedBy }) => (
          <TextInput
            id={id}
            invalid={invalid}
            aria-describedby={describedBy}
            autoComplete="username"
            placeholder="name@example.com 或 手机号"
            disabled={pending}
            value={form.values.account}
            onChange={(e) => form.set('account', e.target.value)}
          />
        )}
      </Field>
      <Field label="密码" error={form.errors.password}>
        {({ id, invalid, describedBy }) => (
          <PasswordInput
            id={id}
            invalid={invalid}
            aria-describedby={describedBy}
            autoComplete="current-password"
            disabled={pending}
            value={form.values.password}
            onChange={(e) => form.set('password', e.target.value)}
          />
        )}
      </Field>
      <ActionButton type="submit" primary block loading={pending}>
        登录
      </ActionButton>
    </form>
  );
}

function CodeLoginForm({ onLogin, pending }: { onLogin: (values: CodeForm) => void; pending: boolean }) {
  const form = useLoginForm(codeRules);
  const countdown = useCountdown();
  const sendCaptcha = useSendSmsCaptcha({
    onSuccess: (sent) => countdown.start(sent.resendAfterSeconds || DEFAULT_RESEND_SECONDS),
  });

  const requestCode = () => {
    // Only the phone field is checked here: the code is what the visitor is about to receive.
    if (form.validate(['phone'])) sendCaptcha.mutate({ phone: normalizeMobile(form.values.phone) });
  };

  return (
    <form
      name="code-login"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        if (form.validate()) onLogin(form.values);
      }}
    >
      <Field label="手机号" error={form.errors.phone}>
        {({ id, invalid, describedBy }) => (
          <TextInput
            id={id}
            invalid={invalid}
            aria-describedby={describedBy}
            autoComplete="tel"
            inputMode="tel"
            disabled={pending}
            value={form.values.phone}
            onChange={(e) => form.set('phone', e.target.value)}
          />
        )}
      </Field>
      <Field label="验证码" error={form.errors.code}>
        {({ id, invalid, describedBy }) => (
          <div className="flex gap-2">
            <TextInput
              id={id}
              invalid={invalid}
              aria-describedby={describedBy}
              autoComplete="one-time-code"
              inputMode="numeric"
              maxLength={6}
              disabled={pending}
              value={form.values.code}
              onChange={(e) => form.set('code', e.target.value)}
            />
            <ActionButton
              className="shrink-0"
              onClick={requestCode}
              loading={sendCaptcha.isPending}
              disabled={pending || countdown.running}
            >
              {countdown.running ? `${countdown.secondsLeft} 秒后重新获取` : '获取验证码'}
            </ActionButton>
          </div>
        )}
      </Field>
      <ActionButton type="submit" primary block loading={pending}>
        登录
      </ActionButton>
    </form>
  );
}

const TABS = [
  { key: 'password', label: '密码登录' },
  { key: 'code', label: '验证码登录' },
] as const;
type TabKey = (typeof TABS)[number]['key'];

export function LoginPage() {
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const redirect = safeRedirect(searchParams.get('redirect'));
  const loginMutation = useLogin({ onSuccess: () => navigate(redirect, { replace: true }) });
  const oidcConfig = useOidcConfig();
  const startOidc = useStartOidcLogin();
  const [tab, setTab] = useState<TabKey>('password');
  const [opened, setOpened] = useState<TabKey[]>(['password']);
  const openTab = (key: TabKey) => {
    setTab(key);
    setOpened((o) => (o.includes(key) ? o : [...o, key]));
  };

  const loginWithPassword = ({ account, password }: PasswordForm) => {
    const identifier = parseIdentifier(account);
    if (identifier) loginMutation.mutate({ ...identifier, password });
  };
  const loginWithCode = ({ phone, code }: CodeForm) => {
    loginMutation.mutate({ phone: normalizeMobile(phone), code });
  };

  return (
    <AuthCard subtitle="登录您的账户">
      <div role="tablist" className="mb-4 flex justify-center gap-8 border-b border-gray-200">
        {TABS.map((t) => (
          <button
            key={t.key}
            type="button"
            role="tab"
            id={`login-tab-${t.key}`}
            aria-selected={tab === t.key}
            aria-controls={`login-panel-${t.key}`}
            onClick={() => openTab(t.key)}
            className={`-mb-px cursor-pointer border-b-2 py-3 text-sm transition-colors ${
              tab === t.key
                ? 'border-[#4D8EFF] text-[#4D8EFF]'
                : 'border-transparent text-gray-700 hover:text-[#4D8EFF]'
            }`}
          >
            {t.label}
          </button>
        ))}
      </div>
      {/* A tab once opened stays mounted (hidden), so switching back keeps what was typed. */}
      {TABS.filter((t) => opened.includes(t.key)).map((t) => (
        <div
          key={t.key}
          role="tabpanel"
          id={`login-panel-${t.key}`}
          aria-labelledby={`login-tab-${t.key}`}
          hidden={tab !== t.key}
        >
          {t.key === 'password' ? (
            <PasswordLoginForm onLogin={loginWithPassword} pending={loginMutation.isPending} />
          ) : (
            <CodeLoginForm onLogin={loginWithCode} pending={loginMutation.isPending} />
          )}
        </div>
      ))}
      <div className="mt-4 flex justify-between text-sm">
        <Link to={paths.signup}>注册账号</Link>
        <Link to={paths.forgetPassword}>忘记密码</Link>
      </div>
      {oidcConfig.data?.enabled && (
        <>
          <div className="my-4 flex items-center gap-3 text-xs text-gray-400">
            <span className="h-px flex-1 bg-gray-200" />或<span className="h-px flex-1 bg-gray-200" />
          </div>
          <ActionButton block loading={startOidc.isPending} onClick={() => startOidc.mutate(redirect)}>
            {`使用${oidcConfig.data.name}登录`}
          </ActionButton>
        </>
      )}
    </AuthCard>
  );
}
