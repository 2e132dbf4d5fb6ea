import { Alert, Button } from 'antd';
import { useProjectNumbers } from '@/entities/project-number/api/get-project-numbers';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useIvrDialogs } from '../components/ivr-dialogs';
import { IvrNumberTable } from '../components/ivr-number-table';
import { IvrTabs } from '../components/ivr-tabs';

/** 号码管理: the project's numbers, their use as caller numbers and which assistant or flow answers calls to them. */
export function IvrNumbersPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  // The server answers 403 to a member's writes; the page does not offer them.
  const canManage = useUserStore((state) => state.userInfo.isOwnerOrAdmin);
  const numbers = useProjectNumbers(projectId);
  const dialogs = useIvrDialogs();

  return (
    <main className="flex flex-col gap-6 p-6">
      <h1 className="text-2xl font-semibold text-gray-900">通话流程</h1>
      <IvrTabs />
      <header className="flex flex-wrap items-center justify-between gap-4">
        <div>
          <h2 className="text-lg font-semibold text-gray-900">号码管理</h2>
          <p className="mt-1 text-sm text-gray-500">
            项目的号码可作为呼出任务的外显号码；绑定智能小助手或通话流程后，拨打该号码的来电由它接听。
          </p>
        </div>
        {canManage && (
          <Button type="primary" onClick={() => dialogs.open({ type: 'add-number' })}>
            添加号码
          </Button>
        )}
      </header>
      {!canManage && (
        <Alert
          type="info"
          showIcon
          title="仅项目所有者或管理员可以添加、修改号码和呼入设置；你可以查看号码并模拟来电。"
        />
      )}
      {numbers.isError && (
        <Alert
          type="error"
          showIcon
          title="号码加载失败"
          action={
            <Button size="small" onClick={() => void numbers.refetch()}>
              重试
            </Button>
          }
        />
      )}
      <section className="rounded-lg border border-gray-200 bg-white p-6">
        <IvrNumberTable
          projectId={projectId ?? ''}
          numbers={numbers.data ?? []}
          loading={numbers.isPending && Boolean(projectId)}
          canManage={canManage}
        />
      </section>
    </main>
  );
}
