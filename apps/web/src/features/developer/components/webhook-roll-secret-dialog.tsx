import { Modal, Radio } from 'antd';
import { useState } from 'react';
import { toast } from 'sonner';
import { useRollWebhookSecret } from '../api/roll-webhook-secret';
import { GRACE_OPTIONS } from '../utils/api-key-format';

function graceExplanation(hours: number): string {
  if (hours === 0) return '旧密钥立即停止签名，接收方换上新密钥之前的验签都会失败。';
  const label = GRACE_OPTIONS.find((option) => option.hours === hours)?.label ?? `${hours} 小时`;
  return `${label}内每次投递同时带新旧两个签名（webhook-signature 中以空格分隔），接收方用任一密钥都能验签；请在此期间换上新密钥。`;
}

/** 轮换密钥: a new signing secret, the old one still signing alongside for the chosen grace. */
export function WebhookRollSecretDialog({
  projectId,
  endpointId,
  onClose,
  onRolled,
}: {
  projectId: string;
  endpointId: string;
  onClose: () => void;
  onRolled: (secret: string) => void;
}) {
  const [graceHours, setGraceHours] = useState(24);
  const roll = useRollWebhookSecret(projectId, endpointId);
  return (
    <Modal
      open
      title="轮换签名密钥"
      okText="轮换"
      onOk={() =>
        roll.mutate(graceHours, {
          onSuccess: (secret) => {
            toast.success('签名密钥已轮换');
            onRolled(secret);
            onClose();
          },
        })
      }
      onCancel={onClose}
      confirmLoading={roll.isPending}
      mask={{ closable: false }}
    >
      <div className="flex flex-col gap-3">
        <div>
          <div className="mb-2 text-sm font-medium text-gray-800">宽限期</div>
          <Radio.Group
            aria-label="宽限期"
            value={graceHours}
            onChange={(event) => setGraceHours(Number(event.target.value))}
            options={GRACE_OPTIONS.map((option) => ({ value: option.hours, label: option.label }))}
          />
        </div>
        <p className="m-0 rounded-md bg-gray-50 p-3 text-sm text-gray-600">{graceExplanation(graceHours)}</p>
      </div>
    </Modal>
  );
}
