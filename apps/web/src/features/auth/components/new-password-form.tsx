import { password as passwordSchema } from '@callpilot/contracts';
import { Button, Form, Input } from 'antd';
import { sameAsRule, zodRule } from '@/lib/form-rules';

type NewPasswordValues = { password: string; confirmPassword: string };

/** 新密码 + 确认新密码, shared by the code flow and the e-mailed-link flow. */
export function NewPasswordForm({
  pending,
  submitLabel,
  onSubmit,
}: {
  pending: boolean;
  submitLabel: string;
  onSubmit: (password: string) => void;
}) {
  return (
    <Form<NewPasswordValues>
      name="new-password"
      layout="vertical"
      requiredMark={false}
      disabled={pending}
      onFinish={({ password }) => onSubmit(password)}
    >
      <Form.Item
        label="新密码"
        name="password"
        extra="至少 8 位，须同时包含字母和数字"
        rules={[zodRule(passwordSchema)]}
      >
        <Input.Password autoComplete="new-password" />
      </Form.Item>
      <Form.Item
        label="确认新密码"
        name="confirmPassword"
        dependencies={['password']}
        rules={[sameAsRule('password')]}
      >
        <Input.Password autoComplete="new-password" />
      </Form.Item>
      <Button type="primary" htmlType="submit" block loading={pending}>
        {submitLabel}
      </Button>
    </Form>
  );
}
