import { type InvitableRole, type InvitationLink, ROLE_LABELS } from '@callpilot/contracts';
import { Alert, Button, Form, Input, Modal, Select } from 'antd';
import { useState } from 'react';
import { toast } from 'sonner';
import { useCreateInvitation } from '../api/create-invitation';
import { copyText } from './account-invitations-table';

const INVITABLE: InvitableRole[] = ['admin', 'member', 'readonly'];
const ROLE_HINTS: Record<InvitableRole, string> = {
  admin: '管理成员、线路、号码、API 密钥、Webhook 与服务商配置',
  member: '管理小助手、知识库、任务与流程，不能管理成员与项目设置',
  readonly: '查看项目的全部内容，不能做任何修改',
};

type Values = { email: string; role: InvitableRole };

/** 邀请成员: e-mail and role; the link is mailed and also shown once to copy. */
export function AccountInviteDialog({
  projectId,
  open,
  onClose,
}: {
  projectId: string;
  open: boolean;
  onClose: () => void;
}) {
  const [form] = Form.useForm<Values>();
  const create = useCreateInvitation(projectId);
  const [sent, setSent] = useState<InvitationLink | null>(null);

  const close = () => {
    setSent(null);
    form.resetFields();
    onClose();
  };

  return (
    <Modal
      title="邀请成员"
      open={open}
      onCancel={close}
      destroyOnHidden
      footer={
        sent ? (
          <Button type="primary" onClick={close}>
            完成
          </Button>
        ) : (
          <>
            <Button onClick={close}>取消</Button>
            <Button type="primary" loading={create.isPending} onClick={() => form.submit()}>
              发送邀请
            </Button>
          </>
        )
      }
    >
      {sent ? (
        <div className="flex flex-col gap-3">
          <Alert
            type="success"
            showIcon
            message={`已向 ${sent.email} 发送邀请邮件`}
            description="链接 7 天内有效，仅可使用一次。对方须使用该邮箱的账号登录后接受。"
          />
          <Input.Search
            readOnly
            value={sent.link}
            enterButton="复制链接"
            aria-label="邀请链接"
            onSearch={async () => {
              if (await copyText(sent.link)) toast.success('已复制邀请链接');
            }}
          />
        </div>
      ) : (
        <Form<Values>
          form={form}
          layout="vertical"
          initialValues={{ role: 'member' }}
          onFinish={(values) => create.mutate(values, { onSuccess: setSent })}
        >
          <Form.Item
            label="邮箱"
            name="email"
            rules={[
              { required: true, message: '请输入邮箱' },
              { type: 'email', message: '邮箱格式不正确' },
            ]}
          >
            <Input placeholder="name@example.com" autoComplete="off" />
          </Form.Item>
          <Form.Item label="角色" name="role" rules={[{ required: true, message: '请选择角色' }]}>
            <Select<InvitableRole>
              options={INVITABLE.map((r) => ({ value: r, label: `${ROLE_LABELS[r]} — ${ROLE_HINTS[r]}` }))}
            />
          </Form.Item>
        </Form>
      )}
    </Modal>
  );
}
