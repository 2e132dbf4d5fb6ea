import { type CurrentUser, type ProfileUpdate, profileUpdate } from '@callpilot/contracts';
import { Button, Form, Input } from 'antd';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { useUpdateProfile } from '../api/update-profile';

const PROFILE_MAX = 500;

export function AccountProfileForm({ user }: { user: CurrentUser }) {
  const updateProfile = useUpdateProfile({ onSuccess: () => toast.success('资料已保存') });
  return (
    <Form<ProfileUpdate>
      name="account-profile"
      layout="vertical"
      requiredMark={false}
      className="max-w-lg"
      initialValues={{ displayName: user.displayName, profile: user.profile }}
      disabled={updateProfile.isPending}
      onFinish={({ displayName, profile }) =>
        updateProfile.mutate({ displayName: displayName.trim(), profile: profile ?? '' })
      }
    >
      <Form.Item label="邮箱">
        <Input value={user.email || '-'} disabled />
      </Form.Item>
      <Form.Item label="昵称" name="displayName" rules={[zodRule(profileUpdate.shape.displayName)]}>
        <Input maxLength={50} />
      </Form.Item>
      <Form.Item
        label="简介"
        name="profile"
        rules={[{ max: PROFILE_MAX, message: `简介不能超过 ${PROFILE_MAX} 个字符` }]}
      >
        <Input.TextArea rows={4} maxLength={PROFILE_MAX} showCount placeholder="介绍一下自己或团队分工" />
      </Form.Item>
      <Button type="primary" htmlType="submit" loading={updateProfile.isPending}>
        保存
      </Button>
    </Form>
  );
}
