import { password } from '@callpilot/contracts';
import { Form, Input } from 'antd';
import { sameAsRule, zodRule } from '@/lib/form-rules';

/**
 * A new password and its confirmation, checked with the contract's own password rule, so every
 * form that sets a password (sign-up, reset, change) says the same thing the server would.
 * The values land in the form as `password` and `confirmPassword`.
 */
export function NewPasswordFields({
  label = '新密码',
  confirmLabel = '确认新密码',
}: {
  label?: string;
  confirmLabel?: string;
}) {
  return (
    <>
      <Form.Item
        label={label}
        name="password"
        extra="至少 8 位，须同时包含字母和数字"
        rules={[zodRule(password)]}
      >
        <Input.Password autoComplete="new-password" />
      </Form.Item>
      <Form.Item
        label={confirmLabel}
        name="confirmPassword"
        dependencies={['password']}
        rules={[sameAsRule('password')]}
      >
        <Input.Password autoComplete="new-password" />
      </Form.Item>
    </>
  );
}
