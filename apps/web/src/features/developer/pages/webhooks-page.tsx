import { Alert, Button, Tabs } from 'antd';
import { useNavigate, useSearchParams } from 'react-router';
import { webhookEndpointPath } from '@/config/paths';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useWebhookEndpoints } from '../api/get-webhook-endpoints';
import { DeveloperTabs } from '../components/developer-tabs';
import { useWebhookDialogs, WebhookDialogsProvider } from '../components/webhook-dialogs';
import { WebhookEndpointTable } from '../components/webhook-endpoint-table';
import { WebhookEventCatalogue } from '../components/webhook-event-catalogue';

function EmptyEndpoints({ canManage, onAdd }: { canManage: boolean; onAdd: () => void }) {
  return (
    <div className="flex flex-col items-center gap-3 py-10 text-center">
      <p className="m-0 text-base font-medium text-gray-800">还没有 Webhook 端点</p>
      <p className="m-0 max-w-xl text-sm text-gray-500">
        添加一个接收地址，通话开始、接通、结束、分析完成，任务状态变化，客户拒绝再联系时，系统会向它发送带签名的
        HTTP POST 请求，失败自动重试。
      </p>
      {canManage && (
        <Button type="primary" onClick={onAdd}>
          添加端点
        </Button>
      )}
    </div>
  );
}

function EndpointsTab({ projectId, canManage }: { projectId: string | undefined; canManage: boolean }) {
  const endpoints = useWebhookEndpoints(projectId);
  const dialogs = useWebhookDialogs();
  const navigate = useNavigate();
  // A new endpoint's page is where its secret and 发送测试事件 are: go there.
  const add = () =>
    dialogs.open({ type: 'create', onCreated: (created) => navigate(webhookEndpointPath(created.id)) });
  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap items-center justify-between gap-4">
        <p className="m-0 text-sm text-gray-500">
          事件按 Standard Webhooks 规范签名，15 秒超时，失败后按 5 秒、5 分钟、30 分钟……至 24 小时重试；返回
          410 或连续失败 5 天的端点会被停用并通知项目所有者。
        </p>
        {canManage && (endpoints.data?.length ?? 0) > 0 && (
          <Button type="primary" onClick={add}>
            添加端点
          </Button>
        )}
      </div>
      {!canManage && (
        <Alert
          type="info"
          showIcon
          title="仅项目所有者或管理员可以添加和修改端点、查看签名密钥；你可以查看端点和投递日志。"
        />
      )}
      {endpoints.isError && (
        <Alert
          type="error"
          showIcon
          title="Webhook 端点加载失败"
          action={
            <Button size="small" onClick={() => void endpoints.refetch()}>
              重试
            </Button>
          }
        />
      )}
      <WebhookEndpointTable
        projectId={projectId ?? ''}
        endpoints={endpoints.data ?? []}
        loading={endpoints.isPending}
        canManage={canManage}
        emptyText={
          endpoints.isError ? (
            '加载失败'
          ) : endpoints.isPending ? (
            ' '
          ) : (
            <EmptyEndpoints canManage={canManage} onAdd={add} />
          )
        }
      />
    </div>
  );
}

/** Webhooks: the project's endpoints, and the catalogue of events they can receive. */
export function WebhooksPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const canManage = useUserStore((state) => state.userInfo.isOwnerOrAdmin);
  // The tab is in the URL, so a link can open the catalogue.
  const [search, setSearch] = useSearchParams();
  const tab = search.get('tab') === 'events' ? 'events' : 'endpoints';
  return (
    <main className="flex flex-col gap-6 p-6">
      <h1 className="text-2xl font-semibold text-gray-900">开发者选项</h1>
      <DeveloperTabs />
      <WebhookDialogsProvider projectId={projectId ?? ''} canManage={canManage}>
        <section className="rounded-lg border border-gray-200 bg-white px-6 pb-6 pt-2">
          <Tabs
            activeKey={tab}
            onChange={(key) => setSearch(key === 'events' ? { tab: 'events' } : {}, { replace: true })}
            items={[
              {
                key: 'endpoints',
                label: '端点',
                children: <EndpointsTab projectId={projectId} canManage={canManage} />,
              },
              { key: 'events', label: '事件目录', children: <WebhookEventCatalogue /> },
            ]}
          />
        </section>
      </WebhookDialogsProvider>
    </main>
  );
}
