import { WEBHOOK_DISABLED_REASON_LABELS, type WebhookEndpoint } from '@callpilot/contracts';
import { Alert, Button, Collapse, Popconfirm, Spin, Switch, Tooltip } from 'antd';
import { Link, useNavigate, useParams } from 'react-router';
import { toast } from 'sonner';
import { paths } from '@/config/paths';
import { RequestError } from '@/lib/request';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useDeleteWebhookEndpoint } from '../api/delete-webhook-endpoint';
import { useWebhookEndpoint } from '../api/get-webhook-endpoint';
import { useUpdateWebhookEndpoint } from '../api/update-webhook-endpoint';
import { DeveloperTabs } from '../components/developer-tabs';
import { WebhookDeliveryTable } from '../components/webhook-delivery-table';
import { useWebhookDialogs, WebhookDialogsProvider } from '../components/webhook-dialogs';
import { WebhookEndpointStatus } from '../components/webhook-endpoint-status';
import { WebhookSecretPanel } from '../components/webhook-secret-panel';
import { WebhookVerifyGuide } from '../components/webhook-verify-guide';
import { formatShortTime } from '../utils/api-key-format';
import { eventLabel } from '../utils/webhook-fields';

function EndpointActions({ projectId, endpoint }: { projectId: string; endpoint: WebhookEndpoint }) {
  const dialogs = useWebhookDialogs();
  const update = useUpdateWebhookEndpoint(projectId);
  const remove = useDeleteWebhookEndpoint(projectId);
  const navigate = useNavigate();
  const testButton = (
    <Button disabled={!endpoint.enabled} onClick={() => dialogs.open({ type: 'test', endpoint })}>
      发送测试事件
    </Button>
  );
  return (
    <div className="flex flex-wrap items-center gap-3">
      <span className="flex items-center gap-2 text-sm text-gray-700">
        <Switch
          aria-label="启用端点"
          checked={endpoint.enabled}
          loading={update.isPending}
          onChange={(enabled) =>
            update.mutate(
              { endpointId: endpoint.id, body: { enabled } },
              {
                onSuccess: () => toast.success(enabled ? '端点已启用，待投递的事件将继续发送' : '端点已停用'),
              },
            )
          }
        />
        {endpoint.enabled ? '启用' : '停用'}
      </span>
      {endpoint.enabled ? (
        testButton
      ) : (
        <Tooltip title="端点已停用，启用后才能发送">
          <span className="inline-flex cursor-not-allowed">{testButton}</span>
        </Tooltip>
      )}
      <Button onClick={() => dialogs.open({ type: 'edit', endpoint })}>编辑</Button>
      <Popconfirm
        title="删除该端点？"
        description="删除后不再向它发送事件，投递日志一并删除。"
        okText="删除"
        okButtonProps={{ danger: true }}
        cancelText="取消"
        onConfirm={() =>
          remove
            .mutateAsync(endpoint.id)
            .then(() => {
              toast.success('已删除端点');
              navigate(paths.developerWebhooks);
            })
            .catch(() => undefined)
        }
      >
        <Button danger>删除</Button>
      </Popconfirm>
    </div>
  );
}

function EndpointAlerts({ endpoint }: { endpoint: WebhookEndpoint }) {
  if (!endpoint.enabled) {
    const reason = endpoint.disabledReason
      ? WEBHOOK_DISABLED_REASON_LABELS[endpoint.disabledReason]
      : '已停用';
    return (
      <Alert
        type={endpoint.disabledReason === 'manual' ? 'info' : 'error'}
        showIcon
        title={`${reason}${endpoint.disabledAt ? `（${formatShortTime(endpoint.disabledAt)}）` : ''}`}
        description="停用期间产生的事件会保留为待投递，重新启用后继续发送。"
      />
    );
  }
  if (endpoint.failingSince) {
    return (
      <Alert
        type="warning"
        showIcon
        title={`自 ${formatShortTime(endpoint.failingSince)} 起投递一直失败`}
        description="请检查接收地址是否可用、是否在 15 秒内返回 2xx。连续失败 5 天会自动停用端点并通知项目所有者。"
      />
    );
  }
  return null;
}

function EndpointContent({ projectId, endpointId }: { projectId: string; endpointId: string }) {
  const canManage = useUserStore((state) => state.userInfo.isOwnerOrAdmin);
  const endpoint = useWebhookEndpoint(projectId, endpointId);
  const dialogs = useWebhookDialogs();

  if (endpoint.isPending) {
    return (
      <div className="flex justify-center py-16">
        <Spin />
      </div>
    );
  }
  if (endpoint.isError) {
    const missing = endpoint.error instanceof RequestError && endpoint.error.status === 404;
    return (
      <Alert
        type="error"
        showIcon
        title={missing ? '端点不存在或已删除' : '端点加载失败'}
        action={
          missing ? (
            <Link to={paths.developerWebhooks}>返回 Webhooks</Link>
          ) : (
            <Button size="small" onClick={() => void endpoint.refetch()}>
              重试
            </Button>
          )
        }
      />
    );
  }
  const data = endpoint.data;
  return (
    <>
      <section className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6">
        <div className="flex flex-wrap items-start justify-between gap-4">
          <div className="flex min-w-0 flex-col gap-1">
            <h2 className="m-0 break-all font-mono text-base font-semibold text-gray-900">{data.url}</h2>
            {data.description && <p className="m-0 text-sm text-gray-500">{data.description}</p>}
            <div className="mt-1 flex flex-wrap items-center gap-3 text-sm text-gray-600">
              <WebhookEndpointStatus endpoint={data} />
              <span>
                订阅 {data.events.length} 个事件：{data.events.map(eventLabel).join('、')}
              </span>
            </div>
          </div>
          {canManage && <EndpointActions projectId={projectId} endpoint={data} />}
        </div>
        <EndpointAlerts endpoint={data} />
        {canManage && <WebhookSecretPanel projectId={projectId} endpoint={data} />}
        <Collapse
          size="small"
          items={[{ key: 'verify', label: '如何验证签名', children: <WebhookVerifyGuide /> }]}
        />
      </section>
      <section className="flex flex-col gap-3 rounded-lg border border-gray-200 bg-white p-6">
        <h2 className="m-0 text-lg font-semibold text-gray-900">投递日志</h2>
        <WebhookDeliveryTable
          projectId={projectId}
          endpointId={endpointId}
          onOpen={(delivery) => dialogs.open({ type: 'delivery', endpointId, deliveryId: delivery.id })}
        />
      </section>
    </>
  );
}

/** One webhook endpoint: its settings, signing secret, test events and delivery log. */
export function WebhookEndpointPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const canManage = useUserStore((state) => state.userInfo.isOwnerOrAdmin);
  const { endpointId = '' } = useParams();
  return (
    <main className="flex flex-col gap-6 p-6">
      <h1 className="text-2xl font-semibold text-gray-900">开发者选项</h1>
      <DeveloperTabs />
      <Link to={paths.developerWebhooks} className="text-sm">
        ← 返回 Webhooks
      </Link>
      <WebhookDialogsProvider projectId={projectId ?? ''} canManage={canManage}>
        {projectId && <EndpointContent projectId={projectId} endpointId={endpointId} />}
      </WebhookDialogsProvider>
    </main>
  );
}
