import {
  lintSmsTemplate,
  SMS_TEMPLATE_MAX_LENGTH,
  SMS_TEMPLATE_TYPE_LABELS,
  type SmsTemplate,
  type SmsTemplateType,
  smsTemplateType,
  smsTemplateWriteRequest,
} from '@callpilot/contracts';
import { Alert, Button, Drawer, Form, Input, Select } from 'antd';
import { useState } from 'react';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { useSmsSignatures } from '../api/get-sms-signatures';
import { useSaveSmsTemplate } from '../api/save-sms-template';
import { useSubmitSmsReview } from '../api/submit-sms-review';
import { bracketed } from '../utils/sms-format';
import { SmsTemplateLintPanel } from './sms-template-lint-panel';

const fields = smsTemplateWriteRequest.shape;

const TYPE_OPTIONS = smsTemplateType.options.map((type) => ({
  value: type,
  label: SMS_TEMPLATE_TYPE_LABELS[type],
}));

type FormValues = {
  type: SmsTemplateType;
  name: string;
  content: string;
  remark?: string;
  signatureName?: string;
};

/** Approved signatures are few; one page of them fills the preview's select. */
const APPROVED_SIGNATURES = { page: 1, pageSize: 100, status: 'approved' as const };

/**
 * 新建/编辑模板 with the linter live under the content, so what a reviewer would reject is fixed
 * before it is sent; 提交审核 saves first, then submits.
 */
export function SmsTemplateEditorDrawer({
  projectId,
  template,
  onClose,
}: {
  projectId: string;
  /** Absent when creating. */
  template?: SmsTemplate;
  onClose: () => void;
}) {
  const [form] = Form.useForm<FormValues>();
  const type = Form.useWatch('type', form) ?? template?.type ?? 'notification';
  const content = Form.useWatch('content', form) ?? template?.content ?? '';
  const signatureName = Form.useWatch('signatureName', form);
  const signatures = useSmsSignatures(projectId, APPROVED_SIGNATURES);
  const save = useSaveSmsTemplate(projectId);
  // The editor shows the server's refusal itself, next to the content it is about.
  const submit = useSubmitSmsReview(projectId, 'templates', { showError: false });
  // A refused submission leaves a saved draft behind: later saves edit it rather than create another.
  const [savedId, setSavedId] = useState(template?.id);
  const [error, setError] = useState<string | null>(null);
  const [submitting, setSubmitting] = useState(false);

  const persist = async (): Promise<string | null> => {
    const values = await form.validateFields().catch(() => null);
    if (!values) return null;
    const saved = await save
      .mutateAsync({
        id: savedId,
        body: {
          type: values.type,
          name: values.name.trim(),
          content: values.content.trim(),
          remark: values.remark?.trim() ?? '',
        },
      })
      .catch((cause: Error) => {
        setError(cause.message);
        return null;
      });
    if (saved) setSavedId(saved.id);
    return saved?.id ?? null;
  };

  const saveDraft = async () => {
    setError(null);
    if (await persist()) {
      toast.success('模板已保存为草稿');
      onClose();
    }
  };

  const saveAndSubmit = async () => {
    setError(null);
    // Read from the form, not the watched values, which trail a keystroke by one render.
    const current = form.getFieldsValue();
    const errors = lintSmsTemplate({
      type: current.type,
      content: current.content ?? '',
      signatureName: current.signatureName,
    }).issues.filter((issue) => issue.level === 'error');
    if (errors.length > 0) {
      setError(`模板有 ${errors.length} 项须修改（见下方检查结果），修改后才能提交审核`);
      return;
    }
    setSubmitting(true);
    try {
      const id = await persist();
      if (!id) return;
      await submit.mutateAsync(id);
      toast.success('模板已提交审核');
      onClose();
    } catch (cause) {
      // The server's own check (or a state change) refused it; the draft is saved.
      setError((cause as Error).message);
    } finally {
      setSubmitting(false);
    }
  };

  const busy = save.isPending || submitting;
  return (
    <Drawer
      open
      title={template ? `编辑模板：${template.name}` : '新建模板'}
      size={720}
      onClose={onClose}
      destroyOnHidden
      mask={{ closable: false }}
      footer={
        <div className="flex justify-end gap-2">
          <Button onClick={onClose}>取消</Button>
          <Button onClick={() => void saveDraft()} loading={save.isPending && !submitting}>
            保存草稿
          </Button>
          <Button type="primary" onClick={() => void saveAndSubmit()} loading={submitting}>
            提交审核
          </Button>
        </div>
      }
    >
      {error && <Alert className="mb-4" type="error" showIcon title={error} />}
      {template?.status === 'rejected' && template.rejectReason && (
        <Alert className="mb-4" type="warning" showIcon title={`上次未通过：${template.rejectReason}`} />
      )}
      <Form<FormValues>
        form={form}
        name="sms-template"
        layout="vertical"
        requiredMark={false}
        disabled={busy}
        initialValues={{
          type: template?.type ?? 'notification',
          name: template?.name ?? '',
          content: template?.content ?? '',
          remark: template?.remark ?? '',
        }}
      >
        <div className="grid grid-cols-2 gap-4">
          <Form.Item label="模板类型" name="type" rules={[zodRule(fields.type)]}>
            <Select options={TYPE_OPTIONS} />
          </Form.Item>
          <Form.Item label="模板名称" name="name" rules={[zodRule(fields.name)]}>
            <Input maxLength={30} placeholder="例如：订单发货通知" />
          </Form.Item>
        </div>
        <Form.Item
          label="模板内容"
          name="content"
          rules={[zodRule(fields.content)]}
          extra="变量写作 ${name}，如 ${code}、${time}；签名不写在内容里，发送时自动加在开头。"
        >
          <Input.TextArea rows={5} maxLength={SMS_TEMPLATE_MAX_LENGTH} showCount />
        </Form.Item>
        <Form.Item label="申请说明" name="remark" rules={[zodRule(fields.remark)]}>
          <Input.TextArea rows={2} maxLength={200} placeholder="发送场景、接收人群（选填，帮助审核）" />
        </Form.Item>
        <Form.Item
          label="预览签名"
          name="signatureName"
          extra="选一个已通过的签名，按它的长度预览字数和计费条数（不随模板提交）。"
        >
          <Select
            allowClear
            placeholder={signatures.data?.items.length ? '选择签名' : '还没有已通过的签名'}
            options={(signatures.data?.items ?? []).map((signature) => ({
              value: signature.name,
              label: bracketed(signature.name),
            }))}
          />
        </Form.Item>
      </Form>
      <SmsTemplateLintPanel type={type} content={content} signatureName={signatureName} />
    </Drawer>
  );
}
