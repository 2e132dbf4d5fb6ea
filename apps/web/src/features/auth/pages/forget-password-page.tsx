import { codeTarget, email as emailSchema, verificationCode } from '@callpilot/contracts';
import { Alert, Button, Form, Input, Result, Steps } from 'antd';
import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { paths } from '@/config/paths';
import { zodRule } from '@/lib/form-rules';
import { useResetPasswordByCode } from '../api/reset-password-by-code';
import { useResetPasswordDone } from '../api/reset-password-done';
import { useSendResetCode } from '../api/send-reset-code';
import { useSendResetPasswordMail } from '../api/send-reset-password-mail';
import { useVerifyResetCode } from '../api/verify-reset-code';
import { AuthCard } from '../components/auth-card';
import { NewPasswordForm } from '../components/new-password-form';
import { useCountdown } from '../hooks/use-countdown';
import { isMobile, normalizeMobile } from '../utils/auth-identifier';

const DEFAULT_RESEND_SECONDS = 60;

type Step = 'target' | 'verify' | 'password' | 'done';
const STEP_ORDER: Step[] = ['target', 'verify', 'password', 'done'];

const normalizeTarget = (raw: string) => (isMobile(raw) ? normalizeMobile(raw) : raw.trim());

function BackToLogin() {
  const navigate = useNavigate();
  return (
    <Button type="primary" onClick={() => navigate(paths.login, { replace: true })}>
      返回登录
    </Button>
  );
}

function TargetStep({ onSent }: { onSent: (target: string, resendAfterSeconds: number) => void }) {
  const [form] = Form.useForm<{ target: string }>();
  const [mailSentTo, setMailSentTo] = useState<string>();
  const sendCode = useSendResetCode();
  const sendMail = useSendResetPasswordMail();

  const submit = ({ target }: { target: string }) => {
    const normalized = normalizeTarget(target);
    sendCode.mutate(normalized, {
      onSuccess: (sent) => onSent(normalized, sent.resendAfterSeconds || DEFAULT_RESEND_SECONDS),
    });
  };

  const sendLink = async () => {
    const { target } = await form.validateFields().catch(() => ({ target: undefined }));
    if (!target) return;
    const address = target.trim();
    if (!emailSchema.safeParse(address).success) {
      form.setFields([{ name: 'target', errors: ['通过邮件链接重置需要填写邮箱'] }]);
      return;
    }
    sendMail.mutate(address, { onSuccess: () => setMailSentTo(address) });
  };

  const pending = sendCode.isPending || sendMail.isPending;
  return (
    <Form
      form={form}
      name="forget-target"
      layout="vertical"
      requiredMark={false}
      disabled={pending}
      onFinish={submit}
    >
      <Form.Item label="邮箱或手机号" name="target" rules={[zodRule(codeTarget)]}>
        <Input autoComplete="username" placeholder="注册时使用的邮箱或手机号" />
      </Form.Item>
      {mailSentTo && (
        <Alert
          className="mb-4"
          type="success"
          showIcon
          title={`如果 ${mailSentTo} 已注册，重置链接已发送，请查收邮件并按链接设置新密码`}
        />
      )}
      <Button type="primary" htmlType="submit" block loading={sendCode.isPending}>
        发送验证码
      </Button>
      <Button className="mt-3" type="link" block onClick={sendLink} loading={sendMail.isPending}>
        通过邮件链接重置
      </Button>
    </Form>
  );
}

function VerifyStep({
  target,
  resendAfterSeconds,
  onVerified,
}: {
  target: string;
  resendAfterSeconds: number;
  onVerified: (code: string) => void;
}) {
  // The code was just sent by the previous step, so the wait before resending starts now.
  const countdown = useCountdown(resendAfterSeconds);
  const resend = useSendResetCode({
    onSuccess: (sent) => countdown.start(sent.resendAfterSeconds || DEFAULT_RESEND_SECONDS),
  });
  const verify = useVerifyResetCode();

  return (
    <Form<{ code: string }>
      name="forget-verify"
      layout="vertical"
      requiredMark={false}
      disabled={verify.isPending}
      onFinish={({ code }) => verify.mutate({ target, code }, { onSuccess: () => onVerified(code) })}
    >
      <p className="mb-4 text-sm text-gray-600">验证码已发送至 {target}，10 分钟内有效。</p>
      <Form.Item label="验证码">
        <div className="flex gap-2">
          <Form.Item name="code" noStyle rules={[zodRule(verificationCode)]}>
            <Input aria-label="验证码" autoComplete="one-time-code" inputMode="numeric" maxLength={6} />
          </Form.Item>
          <Button
            className="shrink-0"
            disabled={countdown.running}
            loading={resend.isPending}
            onClick={() => resend.mutate(target)}
          >
            {countdown.running ? `${countdown.secondsLeft} 秒后重新发送` : '重新发送'}
          </Button>
        </div>
      </Form.Item>
      <Button type="primary" htmlType="submit" block loading={verify.isPending}>
        下一步
      </Button>
    </Form>
  );
}

function CodeFlow() {
  const [step, setStep] = useState<Step>('target');
  const [target, setTarget] = useState('');
  const [resendAfter, setResendAfter] = useState(DEFAULT_RESEND_SECONDS);
  const [code, setCode] = useState('');
  const reset = useResetPasswordByCode({ onSuccess: () => setStep('done') });

  return (
    <>
      <Steps
        className="mb-8"
        size="small"
        current={STEP_ORDER.indexOf(step)}
        items={[{ title: '填写账号' }, { title: '验证' }, { title: '设置新密码' }, { title: '完成' }]}
      />
      {step === 'target' && (
        <TargetStep
          onSent={(sentTo, seconds) => {
            setTarget(sentTo);
            setResendAfter(seconds);
            setStep('verify');
          }}
        />
      )}
      {step === 'verify' && (
        <VerifyStep
          target={target}
          resendAfterSeconds={resendAfter}
          onVerified={(verified) => {
            setCode(verified);
            setStep('password');
          }}
        />
      )}
      {step === 'password' && (
        <NewPasswordForm
          pending={reset.isPending}
          submitLabel="重置密码"
          onSubmit={(password) => reset.mutate({ target, code, password })}
        />
      )}
      {step === 'done' && (
        <Result status="success" title="密码已重置" subTitle="请使用新密码登录" extra={<BackToLogin />} />
      )}
      {step !== 'done' && (
        <p className="mt-4 text-center text-sm">
          <Link to={paths.login}>返回登录</Link>
        </p>
      )}
    </>
  );
}

/** The page an e-mailed reset or change-password link opens: the token stands in for the code. */
function LinkFlow({ token }: { token: string }) {
  const [done, setDone] = useState(false);
  const resetDone = useResetPasswordDone({ onSuccess: () => setDone(true) });
  if (done) {
    return <Result status="success" title="密码已重置" subTitle="请使用新密码登录" extra={<BackToLogin />} />;
  }
  return (
    <NewPasswordForm
      pending={resetDone.isPending}
      submitLabel="确认修改"
      onSubmit={(password) => resetDone.mutate({ token, password })}
    />
  );
}

export function ForgetPasswordPage() {
  const [searchParams] = useSearchParams();
  const token = searchParams.get('token');
  return (
    <AuthCard subtitle={token ? '设置新密码' : '找回密码'} wide>
      {token ? <LinkFlow token={token} /> : <CodeFlow />}
    </AuthCard>
  );
}
