import { projectRegisterRequest, type RegisterRequest, registerRequest } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { Button, Form, Input, Select, Spin, Steps } from 'antd';
import { useEffect, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { NewPasswordFields } from '@/components/form/new-password-fields';
import { loginHref, paths } from '@/config/paths';
import { getCurrentUser } from '@/lib/api/get-current-user';
import { clearToken, getToken } from '@/lib/auth-token';
import { zodRule } from '@/lib/form-rules';
import { RequestError } from '@/lib/request';
import { safeRedirect } from '@/lib/safe-redirect';
import { useRegister } from '../api/register';
import { useRegisterProject } from '../api/register-project';
import { AuthCard } from '../components/auth-card';

const INDUSTRIES = [
  '教育培训',
  '金融',
  '保险',
  '房地产',
  '电商零售',
  '汽车',
  '医疗健康',
  '企业服务',
  '本地生活',
  '物流',
  '旅游酒店',
  '政务与公共服务',
  '其他',
];

type AccountForm = RegisterRequest & { confirmPassword: string };
type ProjectForm = { name: string; company: string; industry: string };

const ACCOUNT_STEP = 0;
const PROJECT_STEP = 1;

function AccountStep({ onDone }: { onDone: () => void }) {
  const registerMutation = useRegister({ onSuccess: onDone });
  return (
    <Form<AccountForm>
      name="signup-account"
      layout="vertical"
      requiredMark={false}
      disabled={registerMutation.isPending}
      onFinish={({ email, displayName, password }) =>
        registerMutation.mutate({ email: email.trim(), displayName: displayName.trim(), password })
      }
    >
      <Form.Item label="邮箱" name="email" rules={[zodRule(registerRequest.shape.email)]}>
        <Input autoComplete="email" placeholder="name@example.com" />
      </Form.Item>
      <Form.Item label="昵称" name="displayName" rules={[zodRule(registerRequest.shape.displayName)]}>
        <Input autoComplete="nickname" maxLength={50} />
      </Form.Item>
      <NewPasswordFields label="密码" confirmLabel="确认密码" />
      <Button type="primary" htmlType="submit" block loading={registerMutation.isPending}>
        下一步
      </Button>
    </Form>
  );
}

function ProjectStep({ onDone }: { onDone: () => void }) {
  const registerProject = useRegisterProject({ onSuccess: onDone });
  const fields = projectRegisterRequest.shape;
  return (
    <Form<ProjectForm>
      name="signup-project"
      layout="vertical"
      requiredMark={false}
      disabled={registerProject.isPending}
      onFinish={(values) => registerProject.mutate(values)}
    >
      <Form.Item label="项目名称" name="name" rules={[zodRule(fields.name)]}>
        <Input maxLength={50} placeholder="例如：华东外呼项目" />
      </Form.Item>
      <Form.Item label="公司名称" name="company" rules={[zodRule(fields.company)]}>
        <Input maxLength={100} autoComplete="organization" />
      </Form.Item>
      <Form.Item label="所属行业" name="industry" rules={[zodRule(fields.industry)]}>
        <Select placeholder="请选择所属行业" options={INDUSTRIES.map((value) => ({ value, label: value }))} />
      </Form.Item>
      <Button type="primary" htmlType="submit" block loading={registerProject.isPending}>
        完成并进入控制台
      </Button>
    </Form>
  );
}

/**
 * Asks, once, whether a stored token belongs to someone who signed up but has no project yet
 * (they refreshed on step 2). Silent on failure: a stale token only means starting at step 1.
 */
function useSignupResume() {
  const [hadToken] = useState(() => getToken() !== null);
  const probe = useQuery({
    queryKey: ['signup', 'resume'],
    queryFn: () => getCurrentUser({ showError: false, redirectOnUnauthorized: false }),
    enabled: hadToken,
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 0,
  });
  useEffect(() => {
    if (probe.error instanceof RequestError && probe.error.status === 401) clearToken();
  }, [probe.error]);
  return { checking: hadToken && probe.isPending, user: probe.data };
}

export function SignupPage() {
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  // Someone invited to a project signs up to accept: the account is all they need, the invitation
  // brings the project, so they go back to it instead of registering a project of their own.
  const returnTo = searchParams.has('redirect') ? safeRedirect(searchParams.get('redirect'), '') : '';
  const [step, setStep] = useState(ACCOUNT_STEP);
  const resume = useSignupResume();

  useEffect(() => {
    if (!resume.user) return;
    if (returnTo) navigate(returnTo, { replace: true });
    else if (resume.user.projects.length === 0) setStep(PROJECT_STEP);
    else navigate(paths.dashboard, { replace: true });
  }, [resume.user, navigate, returnTo]);

  return (
    <AuthCard subtitle="注册账号，开始使用智能外呼" wide>
      <Steps
        className="mb-8"
        size="small"
        current={step}
        items={returnTo ? [{ title: '创建账号' }] : [{ title: '创建账号' }, { title: '注册项目' }]}
      />
      {resume.checking ? (
        <div className="flex justify-center py-10">
          <Spin />
        </div>
      ) : step === ACCOUNT_STEP ? (
        <>
          <AccountStep
            onDone={() => (returnTo ? navigate(returnTo, { replace: true }) : setStep(PROJECT_STEP))}
          />
          <p className="mt-4 text-center text-sm text-gray-500">
            已有账号？<Link to={returnTo ? loginHref(returnTo) : paths.login}>去登录</Link>
          </p>
        </>
      ) : (
        <ProjectStep onDone={() => navigate(paths.dashboard, { replace: true })} />
      )}
    </AuthCard>
  );
}
