import { MAINLAND_MOBILE, normalizeMobile } from '@callpilot/contracts';
import { Alert, Form, Input, Modal } from 'antd';
import { useAddSmsOptOut } from '../api/add-sms-opt-out';

/** 添加号码 to the do-not-disturb list: no SMS goes to it from then on. */
export function SmsOptOutAddDialog({
  projectId,
  open,
  onClose,
}: {
  projectId: string;
  open: boolean;
  onClose: () => void;
}) {
  const [form] = Form.useForm<{ phone: string }>();
  const add = useAddSmsOptOut(projectId);
  const close = () => {
    form.resetFields();
    add.reset();
    onClose();
  };
  return (
    <Modal
      title="添加免打扰号码"
      open={open}
      okText="添加"
      cancelText="取消"
      confirmLoading={add.isPending}
      onOk={() => form.submit()}
      onCancel={close}
      destroyOnHidden
    >
      {add.isError && <Alert className="mb-4" type="error" showIcon title={add.error.message} />}
      <Form
        form={form}
        layout="vertical"
        onFinish={({ phone }) => add.mutate(phone.trim(), { onSuccess: close })}
      >
        <Form.Item
          label="手机号"
          name="phone"
          rules={[
            { required: true, message: '请输入手机号' },
            {
              validator: (_, value: string | undefined) =>
                !value || MAINLAND_MOBILE.test(normalizeMobile(value.trim()))
                  ? Promise.resolve()
                  : Promise.reject(new Error('手机号须为 11 位中国大陆手机号')),
            },
          ]}
          extra="添加后不会再向该号码发送任何短信"
        >
          <Input maxLength={20} placeholder="例如 13800138000" />
        </Form.Item>
      </Form>
    </Modal>
  );
}
