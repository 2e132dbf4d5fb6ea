import { Button, Empty } from 'antd';
import { useCurrentUser } from '@/lib/api/get-current-user';

export function DashboardPage() {
  const currentUser = useCurrentUser();

  const user = currentUser.data;
  const currentProject = user?.projects[0];

  return (
    <main className="mx-auto flex max-w-5xl flex-col gap-6 p-6">
      <header className="flex items-start justify-between gap-4">
        <div>
          <h1 className="text-2xl font-semibold text-gray-900">首页</h1>
          {user && (
            <>
              <p className="mt-1 text-gray-700">欢迎，{user.displayName}</p>
              <p className="mt-1 text-sm text-gray-500">当前项目：{currentProject?.name ?? '暂无项目'}</p>
            </>
          )}
        </div>
      </header>

      {currentUser.isPending && <p className="text-sm text-gray-500">加载中...</p>}
      {currentUser.isError && (
        <div className="flex items-center gap-3 text-sm text-gray-600">
          <span>用户信息加载失败</span>
          <Button size="small" onClick={() => currentUser.refetch()}>
            重试
          </Button>
        </div>
      )}
      {user && (
        <section className="rounded-lg border border-gray-200 bg-white py-12">
          <Empty description="暂无数据：呼叫任务与通话记录上线后，这里会显示今日与近 7 日的通话概况" />
        </section>
      )}
    </main>
  );
}
