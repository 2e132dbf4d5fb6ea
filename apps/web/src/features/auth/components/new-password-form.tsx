import { Button, Form } from 'antd';
import { NewPasswordFields } from '@/components/form/new-password-fields';

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
      <NewPasswordFields />
      <Button type="primary" htmlType="submit" block loading={pending}>
        {submitLabel}
      </Button>
    </Form>
  );
}
