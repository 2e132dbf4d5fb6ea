import type { ApiKey, ApiKeyCreated } from '@callpilot/contracts';
import { Modal, Radio } from 'antd';
import { useState } from 'react';
import { useRollApiKey } from '../api/roll-api-key';
import { GRACE_OPTIONS } from '../utils/api-key-format';

function graceExplanation(hours: number): string {
  if (hours === 0) return '旧密钥立即失效，正在使用它的请求会马上失败。仅在密钥已经泄露时选择。';
  const label = GRACE_OPTIONS.find((option) => option.hours === hours)?.label ?? `${hours} 小时`;
  return `新旧两个密钥在 ${label}内都可以使用，之后只有新密钥有效。请在宽限期内把新密钥部署到所有调用方。`;
}

/** 轮换: a new secret with the same name, scopes and limits; the old one works for the chosen grace. */
export function ApiKeyRollDialog({
  projectId,
  apiKey,
  onClose,
  onRolled,
}: {
  projectId: string;
  apiKey: ApiKey;
  onClose: () => void;
  onRolled: (created: ApiKeyCreated) => void;
}) {
  const [graceHours, setGraceHours] = useState(24);
  const roll = useRollApiKey(projectId);
  return (
    <Modal
      open
      title={`轮换密钥「${apiKey.name}」`}
      okText="轮换"
      onOk={() => roll.mutate({ keyId: apiKey.id, graceHours }, { onSuccess: onRolled })}
      onCancel={onClose}
      confirmLoading={roll.isPending}
      mask={{ closable: false }}
    >
      <div className="flex flex-col gap-3">
        <p className="m-0 text-sm text-gray-600">
          生成一个新密钥，名称、权限、IP 白名单和请求上限与原密钥相同。新密钥只显示一次。
        </p>
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
