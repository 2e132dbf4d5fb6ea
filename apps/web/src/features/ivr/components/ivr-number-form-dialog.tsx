import { type ProjectNumber, projectNumberWriteRequest } from '@callpilot/contracts';
import { Form, Input, Modal, Switch } from 'antd';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { type ProjectNumberBody, useSaveProjectNumber } from '../api/save-project-number';

const fields = projectNumberWriteRequest.shape;

/** 添加号码 / 编辑号码: the number is its identity, so an existing one edits only 备注 and 启用. */
export function IvrNumberFormDialog({
  projectId,
  number,
  onClose,
}: {
  projectId: string;
  /** Absent when adding. */
  number?: ProjectNumber;
  onClose: () => void;
}) {
  const [form] = Form.useForm<ProjectNumberBody>();
  const save = useSaveProjectNumber(projectId, { creating: !number });

  const submit = (values: ProjectNumberBody) =>
    save.mutate(
      {
        number: number?.number ?? values.number.trim(),
        label: values.label?.trim() ?? '',
        enabled: values.enabled,
      },
      {
        onSuccess: (saved) => {
          toast.success(number ? '号码已保存' : `已添加号码 ${saved.number}`);
          onClose();
        },
      },
    );

  return (
    <Modal
      open
      title={number ? '编辑号码' : '添加号码'}
      okText={number ? '保存' : '添加'}
      onOk={() => form.submit()}
      onCancel={onClose}
      confirmLoading={save.isPending}
      destroyOnHidden
      mask={{ closable: false }}
    >
      <Form<ProjectNumberBody>
        form={form}
        name="project-number"
        layout="vertical"
        requiredMark={false}
        disabled={save.isPending}
        initialValues={{
          number: number?.number ?? '',
          label: number?.label ?? '',
          enabled: number?.enabled ?? true,
        }}
        onFinish={submit}
      >
        <Form.Item
          label="号码"
          name="number"
          rules={number ? [] : [zodRule(fields.number)]}
          extra={number ? undefined : '手机号或带区号的固话，例如 02188886666'}
        >
          <Input aria-label="号码" maxLength={20} disabled={Boolean(number)} placeholder="请输入号码" />
        </Form.Item>
        <Form.Item label="备注" name="label" rules={[zodRule(fields.label)]}>
          <Input aria-label="备注" maxLength={50} placeholder="例如：上海客服热线（选填）" />
        </Form.Item>
        <Form.Item
          label="启用"
          name="enabled"
          valuePropName="checked"
          extra="停用的号码不能再被呼出任务选作外显号码。"
        >
          <Switch aria-label="启用" />
        </Form.Item>
      </Form>
    </Modal>
  );
}
