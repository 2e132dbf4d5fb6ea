import { WEBHOOK_EVENT_CATALOGUE, type WebhookEndpoint, type WebhookEventType } from '@callpilot/contracts';
import { Modal, Select } from 'antd';
import { useState } from 'react';
import { toast } from 'sonner';
import { useSendWebhookTest } from '../api/send-webhook-test';
import { AVAILABLE_EVENT_TYPES } from '../utils/webhook-fields';

const options = AVAILABLE_EVENT_TYPES.map((type) => ({
  value: type,
  label: `${WEBHOOK_EVENT_CATALOGUE[type].label}（${type}）`,
}));

/** 发送测试事件: the catalogue's sample of a type, signed and sent like a real event, marked as a test. */
export function WebhookTestDialog({
  projectId,
  endpoint,
  onClose,
}: {
  projectId: string;
  endpoint: WebhookEndpoint;
  onClose: () => void;
}) {
  // The endpoint's own events first: that is what its receiver is written for.
  const [eventType, setEventType] = useState<WebhookEventType>(
    endpoint.events.find((type) => AVAILABLE_EVENT_TYPES.includes(type)) ?? 'call.ended',
  );
  const send = useSendWebhookTest(projectId, endpoint.id);
  return (
    <Modal
      open
      title="发送测试事件"
      okText="发送"
      onOk={() =>
        send.mutate(eventType, {
          onSuccess: () => {
            toast.success('测试事件已发送，结果见投递日志');
            onClose();
          },
        })
      }
      onCancel={onClose}
      confirmLoading={send.isPending}
    >
      <div className="flex flex-col gap-3">
        <p className="m-0 text-sm text-gray-600">
          向 <span className="break-all font-mono text-xs">{endpoint.url}</span>{' '}
          发送一条示例事件，与真实事件一样签名、超时和重试，投递日志中标记为「测试」。
        </p>
        <Select<WebhookEventType>
          aria-label="事件类型"
          value={eventType}
          options={options}
          onChange={setEventType}
          className="w-full"
        />
        <p className="m-0 text-xs text-gray-500">{WEBHOOK_EVENT_CATALOGUE[eventType].description}</p>
      </div>
    </Modal>
  );
}
