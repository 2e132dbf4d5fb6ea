import { Button, Divider, Form, Input } from 'antd';
import { toast } from 'sonner';
import { NewPasswordFields } from '@/components/form/new-password-fields';
import { useChangePassword } from '../api/change-password';
import { useSendChangePasswordEmail } from '../api/send-change-password-email';

type ChangePasswordValues = { oldPassword: string; password: string; confirmPassword: string };

export function AccountPasswordForm({ email }: { email: string }) {
  const [form] = Form.useForm<ChangePasswordValues>();
  const changePassword = useChangePassword({
    onSuccess: () => {
      form.resetFields();
      toast.success('密码已修改，下次请使用新密码登录');
    },
  });
  const sendMail = useSendChangePasswordEmail({
    onSuccess: () => toast.success(`修改密码的链接已发送至 ${email}，请查收邮件`),
  });

  return (
    <div className="max-w-lg">
      <Form<ChangePasswordValues>
        form={form}
        name="account-password"
        layout="vertical"
        requiredMark={false}
        disabled={changePassword.isPending}
        onFinish={({ oldPassword, password }) => changePassword.mutate({ oldPassword, password })}
      >
        <Form.Item
          label="当前密码"
          name="oldPassword"
          rules={[{ required: true, message: '请输入当前密码' }]}
        >
          <Input.Password autoComplete="current-password" />
        </Form.Item>
        <NewPasswordFields />
        <Button type="primary" htmlType="submit" loading={changePassword.isPending}>
          修改密码
        </Button>
      </Form>
      <Divider />
      <p className="mb-3 text-sm text-gray-500">
        忘记当前密码？我们可以向 {email || '您的邮箱'} 发送一封修改密码的邮件。
      </p>
      <Button onClick={() => sendMail.mutate()} loading={sendMail.isPending} disabled={!email}>
        通过邮件修改
      </Button>
    </div>
  );
}
