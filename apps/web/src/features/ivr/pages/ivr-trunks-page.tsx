import { Alert, Button } from 'antd';
import { useState } from 'react';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useTrunks } from '../api/get-trunks';
import { useIvrDialogs } from '../components/ivr-dialogs';
import { IvrTabs } from '../components/ivr-tabs';
import { IvrTrunkTable } from '../components/ivr-trunk-table';

/** 线路管理: the project's SIP trunks to its carriers and PBXs, with their live status. */
export function IvrTrunksPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  // The server answers 403 to a member's writes; the page does not offer them.
  const canManage = useUserStore((state) => state.userInfo.isOwnerOrAdmin);
  const [page, setPage] = useState({ page: 1, pageSize: 20 });
  const trunks = useTrunks(projectId, page);
  const dialogs = useIvrDialogs();
  const items = trunks.data?.items ?? [];
  // Every trunk says the same when this server runs the simulated carrier: say it once, here.
  const sipOff = items.find((trunk) => trunk.status.state === 'sip_off')?.status.detail;

  return (
    <main className="flex flex-col gap-6 p-6">
      <h1 className="text-2xl font-semibold text-gray-900">通话流程</h1>
      <IvrTabs />
      <header className="flex flex-wrap items-center justify-between gap-4">
        <div>
          <h2 className="text-lg font-semibold text-gray-900">线路管理</h2>
          <p className="mt-1 text-sm text-gray-500">
            接入运营商或 PBX 的 SIP 中继（注册方式或 IP
            对接）。号码绑定线路后，呼出和呼入经该线路进行；未绑定的号码走模拟线路。
          </p>
        </div>
        {canManage && (
          <Button type="primary" onClick={() => dialogs.open({ type: 'add-trunk' })}>
            添加线路
          </Button>
        )}
      </header>
      {sipOff && (
        <Alert
          type="info"
          showIcon
          title={`SIP 线路未启用：${sipOff}`}
          description="线路配置会保存，服务器以 TELEPHONY=sip 启动后才会注册并承载通话。"
        />
      )}
      {!canManage && (
        <Alert
          type="info"
          showIcon
          title="仅项目所有者或管理员可以添加、修改线路和测试呼叫；你可以查看线路及其状态。"
        />
      )}
      {trunks.isError && (
        <Alert
          type="error"
          showIcon
          title="线路加载失败"
          action={
            <Button size="small" onClick={() => void trunks.refetch()}>
              重试
            </Button>
          }
        />
      )}
      <section className="rounded-lg border border-gray-200 bg-white p-6">
        <IvrTrunkTable
          projectId={projectId ?? ''}
          trunks={items}
          loading={trunks.isPending && Boolean(projectId)}
          canManage={canManage}
          pagination={{ ...page, total: trunks.data?.total ?? 0 }}
          onPageChange={(next, pageSize) =>
            setPage({ page: pageSize === page.pageSize ? next : 1, pageSize })
          }
        />
      </section>
    </main>
  );
}
