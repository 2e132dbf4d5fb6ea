import {
  WEBHOOK_DELIVERY_LOG_DAYS,
  WEBHOOK_DELIVERY_STATUS_LABELS,
  WEBHOOK_EVENT_CATALOGUE,
  type WebhookDelivery,
  type WebhookDeliveryStatus,
  webhookEventType,
} from '@callpilot/contracts';
import { Alert, Button, Select, Table, type TableColumnsType, Tag } from 'antd';
import { useState } from 'react';
import type { DeliveryQuery } from '../api/developer-keys';
import { useWebhookDeliveries } from '../api/get-webhook-deliveries';
import { formatTime } from '../utils/api-key-format';
import { eventLabel } from '../utils/webhook-fields';

export const DELIVERY_STATUS_COLORS: Record<WebhookDeliveryStatus, string> = {
  pending: 'processing',
  succeeded: 'success',
  failed: 'red',
};

const PAGE_SIZE = 20;

const statusOptions = [
  { value: 'all', label: '全部状态' },
  ...(Object.keys(WEBHOOK_DELIVERY_STATUS_LABELS) as WebhookDeliveryStatus[]).map((value) => ({
    value,
    label: WEBHOOK_DELIVERY_STATUS_LABELS[value],
  })),
];

const eventOptions = [
  { value: '', label: '全部事件' },
  ...webhookEventType.options.map((type) => ({
    value: type,
    label: `${WEBHOOK_EVENT_CATALOGUE[type].label}（${type}）`,
  })),
];

const columns: TableColumnsType<WebhookDelivery> = [
  {
    title: '时间',
    dataIndex: 'createdAt',
    render: (at: string) => <span className="whitespace-nowrap">{formatTime(at)}</span>,
  },
  {
    title: '事件',
    dataIndex: 'eventType',
    render: (type: WebhookDelivery['eventType'], delivery) => (
      <span className="flex flex-col">
        <span>
          {eventLabel(type)}
          {delivery.test && <Tag className="!ml-2">测试</Tag>}
        </span>
        <span className="font-mono text-xs text-gray-500">{type}</span>
      </span>
    ),
  },
  {
    title: 'webhook-id',
    dataIndex: 'eventId',
    render: (id: string) => <span className="font-mono text-xs">{id}</span>,
  },
  {
    title: '状态',
    dataIndex: 'status',
    render: (status: WebhookDeliveryStatus, delivery) => (
      <span className="flex items-center gap-2 whitespace-nowrap">
        <Tag color={DELIVERY_STATUS_COLORS[status]} className="!m-0">
          {WEBHOOK_DELIVERY_STATUS_LABELS[status]}
        </Tag>
        {delivery.lastStatusCode !== null && (
          <span className="font-mono text-xs">HTTP {delivery.lastStatusCode}</span>
        )}
      </span>
    ),
  },
  { title: '尝试次数', dataIndex: 'attempts' },
  {
    title: '耗时',
    dataIndex: 'lastDurationMs',
    render: (ms: number | null) => (ms === null ? '-' : `${ms} ms`),
  },
  {
    title: '下次重试',
    dataIndex: 'nextAttemptAt',
    render: (at: string | null, delivery) => (delivery.status === 'pending' && at ? formatTime(at) : '-'),
  },
];

/** 投递日志: the endpoint's deliveries, newest first, filtered and paged by the server. */
export function WebhookDeliveryTable({
  projectId,
  endpointId,
  onOpen,
}: {
  projectId: string;
  endpointId: string;
  onOpen: (delivery: WebhookDelivery) => void;
}) {
  const [query, setQuery] = useState<DeliveryQuery>({ page: 1, pageSize: PAGE_SIZE, status: 'all' });
  const deliveries = useWebhookDeliveries(projectId, endpointId, query);
  const filtered = query.status !== 'all' || Boolean(query.eventType);
  return (
    <div className="flex flex-col gap-3">
      <div className="flex flex-wrap items-center gap-3">
        <Select
          aria-label="投递状态"
          className="w-36"
          value={query.status}
          options={statusOptions}
          onChange={(status: DeliveryQuery['status']) => setQuery({ ...query, status, page: 1 })}
        />
        <Select
          aria-label="事件类型"
          className="w-64"
          value={query.eventType ?? ''}
          options={eventOptions}
          onChange={(eventType: string) => {
            const { eventType: _, ...rest } = query;
            setQuery(eventType ? { ...rest, eventType, page: 1 } : { ...rest, page: 1 });
          }}
        />
        <span className="text-xs text-gray-500">
          投递日志保留 {WEBHOOK_DELIVERY_LOG_DAYS} 天；点击一行查看负载与每次尝试
        </span>
      </div>
      {deliveries.isError && (
        <Alert
          type="error"
          showIcon
          title="投递日志加载失败"
          action={
            <Button size="small" onClick={() => void deliveries.refetch()}>
              重试
            </Button>
          }
        />
      )}
      <Table<WebhookDelivery>
        rowKey="id"
        size="middle"
        scroll={{ x: 'max-content' }}
        columns={[
          ...columns,
          {
            title: '操作',
            key: 'open',
            render: (_, delivery) => (
              <Button
                type="link"
                size="small"
                className="!px-0"
                onClick={(event) => {
                  // The row opens it too; once is enough.
                  event.stopPropagation();
                  onOpen(delivery);
                }}
              >
                详情
              </Button>
            ),
          },
        ]}
        dataSource={deliveries.data?.items ?? []}
        loading={deliveries.isPending && !deliveries.isError}
        onRow={(delivery) => ({ onClick: () => onOpen(delivery), className: 'cursor-pointer' })}
        locale={{
          emptyText: filtered ? '没有符合条件的投递' : '还没有投递记录：事件发生或发送测试事件后会显示在这里',
        }}
        pagination={{
          current: query.page,
          pageSize: query.pageSize,
          total: deliveries.data?.total ?? 0,
          showSizeChanger: false,
          showTotal: (total) => `共 ${total} 条`,
          onChange: (page) => setQuery({ ...query, page }),
        }}
      />
    </div>
  );
}
