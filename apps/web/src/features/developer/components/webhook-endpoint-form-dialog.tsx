import {
  type WebhookEndpoint,
  type WebhookEventType,
  webhookEndpointCreateRequest,
} from '@callpilot/contracts';
import { Alert, Form, Input, Modal } from 'antd';
import { useState } from 'react';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { useCreateWebhookEndpoint } from '../api/create-webhook-endpoint';
import { useUpdateWebhookEndpoint } from '../api/update-webhook-endpoint';
import { WebhookEventPicker } from './webhook-event-picker';

type FormValues = { url: string; description: string; events: WebhookEventType[] };

const fields = webhookEndpointCreateRequest.shape;

/**
 * 添加端点 / 编辑端点. The address is checked by the contract's rule here; whether it may be reached
 * (not a private or loopback address, unless the operator allows it) only the server can tell, and
 * its refusal is shown above the form.
 */
export function WebhookEndpointFormDialog({
  projectId,
  endpoint,
  onClose,
  onCreated,
}: {
  projectId: string;
  /** Absent when adding. */
  endpoint?: WebhookEndpoint;
  onClose: () => void;
  onCreated?: (endpoint: WebhookEndpoint) => void;
}) {
  const [form] = Form.useForm<FormValues>();
  const create = useCreateWebhookEndpoint(projectId);
  const update = useUpdateWebhookEndpoint(projectId);
  const [refusal, setRefusal] = useState<string | null>(null);
  const pending = create.isPending || update.isPending;

  const submit = (values: FormValues) => {
    setRefusal(null);
    const parsed = webhookEndpointCreateRequest.safeParse(values);
    if (!parsed.success) {
      setRefusal(parsed.error.issues[0]?.message ?? '输入不正确');
      return;
    }
    const onError = (error: Error) => setRefusal(error.message);
    if (endpoint) {
      update.mutate(
        { endpointId: endpoint.id, body: parsed.data, quiet: true },
        {
          onSuccess: () => {
            toast.success('端点已保存');
            onClose();
          },
          onError,
        },
      );
    } else {
      create.mutate(parsed.data, {
        onSuccess: (created) => {
          toast.success('已添加端点');
          onClose();
          onCreated?.(created);
        },
        onError,
      });
    }
  };

  return (
    <Modal
      open
      title={endpoint ? '编辑端点' : '添加端点'}
      okText={endpoint ? '保存' : '添加'}
      onOk={() => form.submit()}
      onCancel={onClose}
      confirmLoading={pending}
      destroyOnHidden
      mask={{ closable: false }}
      width={640}
    >
      {refusal && <Alert type="error" showIcon className="!mb-4" title={refusal} />}
      <Form<FormValues>
        form={form}
        name="webhook-endpoint"
        layout="vertical"
        requiredMark={false}
        disabled={pending}
        initialValues={{
          url: endpoint?.url ?? '',
          description: endpoint?.description ?? '',
          events: endpoint?.events ?? [],
        }}
        onFinish={submit}
      >
        <Form.Item
          label="接收地址"
          name="url"
          rules={[zodRule(fields.url)]}
          extra="收到事件后请在 15 秒内返回 2xx；不跟随重定向，返回 410 会停用端点"
        >
          <Input aria-label="接收地址" placeholder="https://example.com/webhooks/callpilot" />
        </Form.Item>
        <Form.Item label="描述" name="description" rules={[zodRule(fields.description)]}>
          <Input aria-label="描述" maxLength={200} placeholder="选填，例如：CRM 线索同步" />
        </Form.Item>
        <Form.Item label="订阅事件" name="events" rules={[zodRule(fields.events)]}>
          <WebhookEventPicker />
        </Form.Item>
      </Form>
    </Modal>
  );
}
