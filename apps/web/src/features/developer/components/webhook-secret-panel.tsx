import type { WebhookEndpoint } from '@callpilot/contracts';
import { Button } from 'antd';
import { useState } from 'react';
import { useRevealWebhookSecret } from '../api/get-webhook-secret';
import { formatShortTime } from '../utils/api-key-format';
import { DeveloperCopyButton } from './developer-copy-button';
import { useWebhookDialogs } from './webhook-dialogs';

export const MASKED_SECRET = 'whsec_••••••••••••••••••••••••';

/**
 * 签名密钥 (owners and admins only): hidden until 显示, copied on demand, rolled with a grace during
 * which deliveries carry both signatures.
 */
export function WebhookSecretPanel({
  projectId,
  endpoint,
}: {
  projectId: string;
  endpoint: WebhookEndpoint;
}) {
  const [secret, setSecret] = useState<string | null>(null);
  const reveal = useRevealWebhookSecret(projectId, endpoint.id);
  const dialogs = useWebhookDialogs();
  const rolling = endpoint.previousSecretUntil && new Date(endpoint.previousSecretUntil) > new Date();

  return (
    <section className="flex flex-col gap-2">
      <h3 className="m-0 text-sm font-semibold text-gray-800">签名密钥</h3>
      <div className="flex flex-wrap items-center gap-2">
        <code className="rounded bg-gray-50 px-2 py-1 font-mono text-sm text-gray-900 break-all">
          {secret ?? MASKED_SECRET}
        </code>
        {secret ? (
          <Button size="small" onClick={() => setSecret(null)}>
            隐藏
          </Button>
        ) : (
          <Button
            size="small"
            loading={reveal.isPending}
            onClick={() => reveal.mutate(undefined, { onSuccess: setSecret })}
          >
            显示
          </Button>
        )}
        <DeveloperCopyButton
          size="small"
          ariaLabel="复制签名密钥"
          text={async () => secret ?? (await reveal.mutateAsync())}
        />
        <Button
          size="small"
          onClick={() => dialogs.open({ type: 'roll-secret', endpointId: endpoint.id, onRolled: setSecret })}
        >
          轮换密钥
        </Button>
      </div>
      <p className="m-0 text-xs text-gray-500">
        每次投递用此密钥按 Standard Webhooks 规范签名（HMAC-SHA256），接收方验签后再处理事件。
        {rolling && ` 轮换宽限中：旧密钥仍同时签名至 ${formatShortTime(endpoint.previousSecretUntil)}。`}
      </p>
    </section>
  );
}
