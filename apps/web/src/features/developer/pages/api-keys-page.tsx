import { Alert, Button } from 'antd';
import { Link } from 'react-router';
import { paths } from '@/config/paths';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useApiKeys } from '../api/get-api-keys';
import { ApiKeyDialogsProvider, useApiKeyDialogs } from '../components/api-key-dialogs';
import { ApiKeyTable } from '../components/api-key-table';
import { DeveloperTabs } from '../components/developer-tabs';

function EmptyKeys({ canManage }: { canManage: boolean }) {
  const dialogs = useApiKeyDialogs();
  return (
    <div className="flex flex-col items-center gap-3 py-10 text-center">
      <p className="m-0 text-base font-medium text-gray-800">还没有 API 密钥</p>
      <p className="m-0 max-w-xl text-sm text-gray-500">
        API 密钥让你的 CRM、订单系统等自己的程序调用开放接口：发起外呼、创建任务和导入联系人、读取通话结果。
        每个密钥只能访问本项目，并只拥有创建时授予的权限。
      </p>
      {canManage && (
        <Button type="primary" onClick={() => dialogs.open({ type: 'create' })}>
          创建密钥
        </Button>
      )}
    </div>
  );
}

function ApiKeysContent({ projectId }: { projectId: string | undefined }) {
  // The server answers 403 to a member's writes; the page does not offer them.
  const canManage = useUserStore((state) => state.userInfo.isOwnerOrAdmin);
  const apiKeys = useApiKeys(projectId);
  const dialogs = useApiKeyDialogs();
  return (
    <>
      <header className="flex flex-wrap items-center justify-between gap-4">
        <div>
          <h2 className="text-lg font-semibold text-gray-900">API 密钥</h2>
          <p className="mt-1 text-sm text-gray-500">
            调用开放接口 <span className="font-mono">/opendock/v1</span> 时在请求头带上{' '}
            <span className="font-mono">Authorization: Bearer cp_live_…</span>
            。密钥只在创建时显示一次，服务器只保存其摘要。 接口说明见{' '}
            <Link to={paths.developerDocs}>API 文档</Link>。
          </p>
        </div>
        {canManage && (apiKeys.data?.length ?? 0) > 0 && (
          <Button type="primary" onClick={() => dialogs.open({ type: 'create' })}>
            创建密钥
          </Button>
        )}
      </header>
      {!canManage && (
        <Alert
          type="info"
          showIcon
          title="仅项目所有者或管理员可以创建、编辑、轮换和吊销密钥；你可以查看密钥列表和请求日志。"
        />
      )}
      {apiKeys.isError && (
        <Alert
          type="error"
          showIcon
          title="API 密钥加载失败"
          action={
            <Button size="small" onClick={() => void apiKeys.refetch()}>
              重试
            </Button>
          }
        />
      )}
      <section className="rounded-lg border border-gray-200 bg-white p-6">
        <ApiKeyTable
          projectId={projectId ?? ''}
          apiKeys={apiKeys.data ?? []}
          // Pending also while the user (and so the project) is still loading: no empty state yet.
          loading={apiKeys.isPending}
          canManage={canManage}
          emptyText={
            apiKeys.isError ? '加载失败' : apiKeys.isPending ? ' ' : <EmptyKeys canManage={canManage} />
          }
        />
      </section>
    </>
  );
}

/** API 密钥: the keys customers' own systems call the open API with. */
export function ApiKeysPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  return (
    <main className="flex flex-col gap-6 p-6">
      <h1 className="text-2xl font-semibold text-gray-900">开发者选项</h1>
      <DeveloperTabs />
      <ApiKeyDialogsProvider projectId={projectId ?? ''}>
        <ApiKeysContent projectId={projectId} />
      </ApiKeyDialogsProvider>
    </main>
  );
}
