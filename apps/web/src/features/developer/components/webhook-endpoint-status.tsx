import { WEBHOOK_DISABLED_REASON_LABELS, type WebhookEndpoint } from '@callpilot/contracts';
import { Tag } from 'antd';
import { formatShortTime } from '../utils/api-key-format';

/** 启用 / 已停用 (and why), with the failure streak a receiver should look at before it is disabled. */
export function WebhookEndpointStatus({ endpoint }: { endpoint: WebhookEndpoint }) {
  if (!endpoint.enabled) {
    return (
      <span className="flex flex-col items-start gap-0.5">
        <Tag color="default" className="!m-0">
          已停用
        </Tag>
        {endpoint.disabledReason && (
          <span className="text-xs text-gray-500">
            {WEBHOOK_DISABLED_REASON_LABELS[endpoint.disabledReason]}
          </span>
        )}
      </span>
    );
  }
  return (
    <span className="flex flex-col items-start gap-0.5">
      <Tag color="success" className="!m-0">
        启用
      </Tag>
      {endpoint.failingSince && (
        <span className="text-xs text-[#d46b08]">自 {formatShortTime(endpoint.failingSince)} 起投递失败</span>
      )}
    </span>
  );
}
