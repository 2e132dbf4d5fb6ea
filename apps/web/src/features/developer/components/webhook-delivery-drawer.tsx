import {
  WEBHOOK_DELIVERY_STATUS_LABELS,
  type WebhookAttempt,
  type WebhookDeliveryDetail,
} from '@callpilot/contracts';
import { Alert, Button, Descriptions, Drawer, Empty, Spin, Tag } from 'antd';
import { toast } from 'sonner';
import { useWebhookDelivery } from '../api/get-webhook-delivery';
import { useReplayWebhookDelivery } from '../api/replay-webhook-delivery';
import { formatTime, httpStatusColor } from '../utils/api-key-format';
import { eventLabel } from '../utils/webhook-fields';
import { DeveloperCodeBlock } from './developer-code-block';
import { DELIVERY_STATUS_COLORS } from './webhook-delivery-table';

const TRIGGER_LABELS: Record<WebhookAttempt['trigger'], string> = { auto: '自动', replay: '手动重发' };

/** What one attempt came to, in a few words: HTTP 200 · 35 ms, or the error. */
export function attemptOutcome(attempt: WebhookAttempt): string {
  const status = attempt.statusCode === null ? '无应答' : `HTTP ${attempt.statusCode}`;
  return `${status} · ${attempt.durationMs} ms${attempt.error ? ` · ${attempt.error}` : ''}`;
}

const headerText = (headers: Record<string, string>) =>
  Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');

function AttemptCard({ attempt, index }: { attempt: WebhookAttempt; index: number }) {
  const ok = attempt.statusCode !== null && attempt.statusCode >= 200 && attempt.statusCode < 300;
  return (
    <li aria-label={`第 ${index + 1} 次尝试`} className="rounded-md border border-gray-200 p-3">
      <div className="mb-2 flex flex-wrap items-center gap-2 text-sm">
        <span className="font-medium text-gray-800">第 {index + 1} 次</span>
        <span className="text-gray-500">{formatTime(attempt.at)}</span>
        <Tag className="!m-0">{TRIGGER_LABELS[attempt.trigger]}</Tag>
        <Tag color={ok ? 'success' : httpStatusColor(attempt.statusCode)} className="!m-0 font-mono">
          {attempt.statusCode ?? '无应答'}
        </Tag>
        <span className="text-gray-500">{attempt.durationMs} ms</span>
      </div>
      {attempt.error && <Alert type="error" showIcon className="!mb-2" title={attempt.error} />}
      <div className="grid gap-2 lg:grid-cols-2">
        <div>
          <div className="mb-1 text-xs text-gray-500">请求头</div>
          <DeveloperCodeBlock
            code={headerText(attempt.requestHeaders)}
            label={`第 ${index + 1} 次请求头`}
            maxHeight={200}
          />
        </div>
        <div>
          <div className="mb-1 text-xs text-gray-500">响应内容</div>
          {attempt.responseBody ? (
            <DeveloperCodeBlock
              code={attempt.responseBody}
              label={`第 ${index + 1} 次响应内容`}
              maxHeight={200}
            />
          ) : (
            <p className="m-0 text-xs text-gray-400">（无）</p>
          )}
        </div>
      </div>
    </li>
  );
}

function DeliveryFacts({ delivery }: { delivery: WebhookDeliveryDetail }) {
  return (
    <Descriptions
      size="small"
      column={2}
      items={[
        {
          key: 'event',
          label: '事件',
          children: (
            <span>
              {eventLabel(delivery.eventType)}{' '}
              <span className="font-mono text-xs text-gray-500">{delivery.eventType}</span>
              {delivery.test && <Tag className="!ml-2">测试</Tag>}
            </span>
          ),
        },
        {
          key: 'status',
          label: '状态',
          children: (
            <span>
              <Tag color={DELIVERY_STATUS_COLORS[delivery.status]} className="!m-0">
                {WEBHOOK_DELIVERY_STATUS_LABELS[delivery.status]}
              </Tag>
              {delivery.lastStatusCode !== null && (
                <span className="ml-2 font-mono text-xs">HTTP {delivery.lastStatusCode}</span>
              )}
            </span>
          ),
        },
        {
          key: 'id',
          label: 'webhook-id',
          children: <span className="break-all font-mono text-xs">{delivery.eventId}</span>,
        },
        { key: 'attempts', label: '尝试次数', children: delivery.attempts },
        { key: 'created', label: '事件时间', children: formatTime(delivery.createdAt) },
        { key: 'next', label: '下次重试', children: formatTime(delivery.nextAttemptAt) },
      ]}
    />
  );
}

/** One delivery: its payload, every attempt with headers and answer, and 重新发送. */
export function WebhookDeliveryDrawer({
  projectId,
  endpointId,
  deliveryId,
  canManage,
  onClose,
}: {
  projectId: string;
  endpointId: string;
  deliveryId: string;
  canManage: boolean;
  onClose: () => void;
}) {
  const delivery = useWebhookDelivery(projectId, endpointId, deliveryId);
  const replay = useReplayWebhookDelivery(projectId, endpointId);

  const resend = () =>
    replay.mutate(deliveryId, {
      onSuccess: (detail) => {
        const latest = detail.attemptLog.at(-1);
        if (!latest) return;
        const outcome = attemptOutcome(latest);
        if (latest.statusCode !== null && latest.statusCode >= 200 && latest.statusCode < 300) {
          toast.success(`重新发送成功：${outcome}`);
        } else {
          toast.error(`重新发送失败：${outcome}`);
        }
      },
    });

  const detail = delivery.data;
  return (
    <Drawer
      open
      title="投递详情"
      size={860}
      onClose={onClose}
      extra={
        canManage && (
          <Button type="primary" loading={replay.isPending} disabled={!detail} onClick={resend}>
            重新发送
          </Button>
        )
      }
    >
      {delivery.isPending ? (
        <div className="flex justify-center py-10">
          <Spin />
        </div>
      ) : delivery.isError || !detail ? (
        <Alert
          type="error"
          showIcon
          title="投递详情加载失败"
          action={
            <Button size="small" onClick={() => void delivery.refetch()}>
              重试
            </Button>
          }
        />
      ) : (
        <div className="flex flex-col gap-5">
          <DeliveryFacts delivery={detail} />
          {canManage && (
            <p className="m-0 text-xs text-gray-500">
              重新发送使用相同的 webhook-id 和负载，以新的时间戳重新签名；成功后该投递不再自动重试。
            </p>
          )}
          <section>
            <h3 className="mb-2 text-sm font-semibold text-gray-800">负载</h3>
            <DeveloperCodeBlock code={JSON.stringify(detail.payload, null, 2)} label="投递负载" />
          </section>
          <section>
            <h3 className="mb-2 text-sm font-semibold text-gray-800">
              尝试记录（{detail.attemptLog.length}）
            </h3>
            {detail.attemptLog.length === 0 ? (
              <Empty description="尚未尝试投递" />
            ) : (
              <ol className="m-0 flex list-none flex-col gap-3 p-0">
                {detail.attemptLog.map((attempt, index) => (
                  <AttemptCard key={attempt.id} attempt={attempt} index={index} />
                ))}
              </ol>
            )}
          </section>
        </div>
      )}
    </Drawer>
  );
}
