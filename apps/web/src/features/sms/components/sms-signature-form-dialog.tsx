import {
  SMS_SIGNATURE_SOURCE_LABELS,
  type SmsSignature,
  type SmsSignatureSource,
  smsSignatureSource,
  smsSignatureWriteRequest,
} from '@callpilot/contracts';
import { Alert, Form, Input, Modal, Select } from 'antd';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { useSaveSmsSignature } from '../api/save-sms-signature';

const fields = smsSignatureWriteRequest.shape;

const SOURCE_OPTIONS = smsSignatureSource.options.map((source) => ({
  value: source,
  label: SMS_SIGNATURE_SOURCE_LABELS[source],
}));

type FormValues = { name: string; source: SmsSignatureSource; remark?: string };

export function SmsSignatureFormDialog({
  projectId,
  signature,
  onClose,
}: {
  projectId: string;
  /** Absent when creating. */
  signature?: SmsSignature;
  onClose: () => void;
}) {
  const [form] = Form.useForm<FormValues>();
  const save = useSaveSmsSignature(projectId);

  const submit = (values: FormValues) =>
    save.mutate(
      {
        id: signature?.id,
        body: { name: values.name.trim(), source: values.source, remark: values.remark?.trim() ?? '' },
      },
      {
        onSuccess: () => {
          toast.success(signature ? '签名已保存，需重新提交审核' : '签名已创建，上传资质证明后即可提交审核');
          onClose();
        },
      },
    );

  return (
    <Modal
      open
      title={signature ? '编辑签名' : '新建签名'}
      okText={signature ? '保存' : '创建'}
      onOk={() => form.submit()}
      onCancel={onClose}
      confirmLoading={save.isPending}
      destroyOnHidden
      mask={{ closable: false }}
    >
      {save.error && <Alert className="mb-4" type="error" showIcon title={save.error.message} />}
      <Form<FormValues>
        form={form}
        name="sms-signature"
        layout="vertical"
        requiredMark={false}
        disabled={save.isPending}
        initialValues={{
          name: signature?.name ?? '',
          source: signature?.source ?? 'enterprise',
          remark: signature?.remark ?? '',
        }}
        onFinish={submit}
      >
        <Form.Item
          label="签名名称"
          name="name"
          rules={[zodRule(fields.name)]}
          extra="2–12 个中文、英文或数字，通常是企业、产品或 App 的名称。不要输入【】，发送时系统会加在短信开头，例如【某某科技】。"
        >
          <Input maxLength={12} placeholder="例如：某某科技" />
        </Form.Item>
        <Form.Item
          label="签名来源"
          name="source"
          rules={[zodRule(fields.source)]}
          extra="签名须与来源的名称一致，审核时会核对资质证明。"
        >
          <Select options={SOURCE_OPTIONS} />
        </Form.Item>
        <Form.Item label="申请说明" name="remark" rules={[zodRule(fields.remark)]}>
          <Input.TextArea rows={3} maxLength={200} showCount placeholder="签名的用途、与来源的关系（选填）" />
        </Form.Item>
      </Form>
    </Modal>
  );
}
