import { WEBHOOK_DROPPED_ERROR, type WebhookEndpoint, type WebhookEventType } from '@callpilot/contracts';
import { Button, Popconfirm, Table, type TableColumnsType, Tooltip } from 'antd';
import { toast } from 'sonner';
import { RowLink } from '@/components/row-link';
import { webhookEndpointPath } from '@/config/paths';
import { useDeleteWebhookEndpoint } from '../api/delete-webhook-endpoint';
import { eventLabel } from '../utils/webhook-fields';
import { DeveloperManageGate } from './developer-manage-gate';
import { useWebhookDialogs } from './webhook-dialogs';
import { WebhookEndpointStatus } from './webhook-endpoint-status';

const linkButton = { type: 'link', size: 'small', className: '!px-0' } as const;

function EventsCell({ events }: { events: WebhookEventType[] }) {
  return (
    <Tooltip
      title={
        <ul className="m-0 list-none p-0">
          {events.map((type) => (
            <li key={type}>
              {eventLabel(type)} <span className="font-mono text-xs opacity-75">{type}</span>
            </li>
          ))}
        </ul>
      }
    >
      <span className="cursor-help border-b border-dashed border-gray-300">{events.length} 个事件</span>
    </Tooltip>
  );
}

function RecentCell({ recent }: { recent: WebhookEndpoint['recent'] }) {
  return (
    <span className="whitespace-nowrap text-sm">
      <span className="text-[#389e0d]">成功 {recent.succeeded}</span>
      <span className="mx-1 text-gray-300">/</span>
      <span className={recent.failed > 0 ? 'text-[#FF5656]' : 'text-gray-500'}>失败 {recent.failed}</span>
      <span className="mx-1 text-gray-300">/</span>
      <span className="text-gray-500">投递中 {recent.pending}</span>
      {recent.dropped > 0 ? (
        <Tooltip title={WEBHOOK_DROPPED_ERROR}>
          <span className="ml-1 cursor-help text-[#FF5656]">（积压丢弃 {recent.dropped}）</span>
        </Tooltip>
      ) : null}
    </span>
  );
}

/** The project's webhook endpoints; a row's address opens its page (secret, test events, log). */
export function WebhookEndpointTable({
  projectId,
  endpoints,
  loading,
  canManage,
  emptyText,
}: {
  projectId: string;
  endpoints: WebhookEndpoint[];
  loading: boolean;
  canManage: boolean;
  emptyText: React.ReactNode;
}) {
  const dialogs = useWebhookDialogs();
  const remove = useDeleteWebhookEndpoint(projectId);
  const columns: TableColumnsType<WebhookEndpoint> = [
    {
      title: 'URL',
      dataIndex: 'url',
      render: (url: string, endpoint) => (
        <RowLink to={webhookEndpointPath(endpoint.id)} className="break-all font-mono text-xs">
          {url}
        </RowLink>
      ),
    },
    { title: '描述', dataIndex: 'description', render: (text: string) => text || '-' },
    {
      title: '订阅事件',
      dataIndex: 'events',
      render: (events: WebhookEventType[]) => <EventsCell events={events} />,
    },
    { title: '状态', key: 'status', render: (_, endpoint) => <WebhookEndpointStatus endpoint={endpoint} /> },
    {
      title: '近 24 小时',
      dataIndex: 'recent',
      render: (recent: WebhookEndpoint['recent']) => <RecentCell recent={recent} />,
    },
    {
      title: '操作',
      key: 'actions',
      fixed: 'right',
      render: (_, endpoint) => (
        <span className="flex flex-wrap gap-x-3">
          <RowLink to={webhookEndpointPath(endpoint.id)} className="text-sm">
            投递日志
          </RowLink>
          <DeveloperManageGate canManage={canManage}>
            <Button
              {...linkButton}
              disabled={!canManage}
              onClick={() => dialogs.open({ type: 'edit', endpoint })}
            >
              编辑
            </Button>
          </DeveloperManageGate>
          {canManage ? (
            <Popconfirm
              title="删除该端点？"
              description="删除后不再向它发送事件，投递日志一并删除。"
              okText="删除"
              okButtonProps={{ danger: true }}
              cancelText="取消"
              onConfirm={() =>
                remove
                  .mutateAsync(endpoint.id)
                  .then(() => toast.success('已删除端点'))
                  .catch(() => undefined)
              }
            >
              <Button {...linkButton} danger>
                删除
              </Button>
            </Popconfirm>
          ) : (
            <DeveloperManageGate canManage={false}>
              <Button {...linkButton} danger disabled>
                删除
              </Button>
            </DeveloperManageGate>
          )}
        </span>
      ),
    },
  ];
  return (
    <Table<WebhookEndpoint>
      rowKey="id"
      size="middle"
      scroll={{ x: 'max-content' }}
      columns={columns}
      dataSource={endpoints}
      loading={loading}
      locale={{ emptyText }}
      pagination={endpoints.length > 20 ? { pageSize: 20, showSizeChanger: false } : false}
    />
  );
}
