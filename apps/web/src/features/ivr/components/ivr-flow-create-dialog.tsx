import { flowCreateRequest } from '@callpilot/contracts';
import { Form, Input, Modal } from 'antd';
import { useNavigate } from 'react-router';
import { ivrFlowEditPath } from '@/config/paths';
import { zodRule } from '@/lib/form-rules';
import { useCreateFlow } from '../api/create-flow';

const fields = flowCreateRequest.shape;

type FormValues = { name: string; description: string };

/** 新建流程: a name and a description; the new draft (a 开始 node) opens in the editor. */
export function IvrFlowCreateDialog({ projectId, onClose }: { projectId: string; onClose: () => void }) {
  const [form] = Form.useForm<FormValues>();
  const navigate = useNavigate();
  const create = useCreateFlow(projectId);

  const submit = (values: FormValues) =>
    create.mutate(
      { name: values.name.trim(), description: values.description?.trim() ?? '' },
      {
        onSuccess: (created) => {
          onClose();
          navigate(ivrFlowEditPath(created.id));
        },
      },
    );

  return (
    <Modal
      open
      title="新建流程"
      okText="创建并编辑"
      onOk={() => form.submit()}
      onCancel={onClose}
      confirmLoading={create.isPending}
      destroyOnHidden
      mask={{ closable: false }}
    >
      <Form<FormValues>
        form={form}
        name="flow-create"
        layout="vertical"
        requiredMark={false}
        disabled={create.isPending}
        initialValues={{ name: '', description: '' }}
        onFinish={submit}
      >
        <Form.Item label="流程名称" name="name" rules={[zodRule(fields.name)]}>
          <Input aria-label="流程名称" maxLength={40} placeholder="例如：客服热线主流程" />
        </Form.Item>
        <Form.Item label="流程说明" name="description" rules={[zodRule(fields.description)]}>
          <Input.TextArea
            aria-label="流程说明"
            rows={3}
            maxLength={200}
            placeholder="这个流程接待哪些来电、做什么（选填）"
          />
        </Form.Item>
      </Form>
    </Modal>
  );
}
