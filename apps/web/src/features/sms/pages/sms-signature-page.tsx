import { Alert, Button } from 'antd';
import { useState } from 'react';
import { useCanWrite } from '@/hooks/use-project-role';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useSmsSignatures } from '../api/get-sms-signatures';
import { type SmsSignatureDialog, SmsSignatureDialogs } from '../components/sms-signature-dialogs';
import { SmsSignatureTable } from '../components/sms-signature-table';
import { SmsStatusFilter } from '../components/sms-status-filter';
import { useSmsListQuery } from '../utils/use-sms-list-query';

export function SmsSignaturePage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const { params, setQuery } = useSmsListQuery();
  const signatures = useSmsSignatures(projectId, params);
  const [dialog, setDialog] = useState<SmsSignatureDialog | null>(null);
  const canWrite = useCanWrite();

  return (
    <>
      <header className="flex flex-wrap items-center justify-between gap-4">
        <div>
          <h2 className="text-lg font-semibold text-gray-900">签名管理</h2>
          <p className="mt-1 max-w-3xl text-sm text-gray-500">
            签名是短信开头【】中的名称，标明发送方。新建签名并上传资质证明后提交审核，审核结果会显示在列表中；未通过时按原因修改后可重新提交，审核中可撤回。已通过的签名不能修改，如需变更请新建。
          </p>
        </div>
        {canWrite && (
          <Button type="primary" onClick={() => setDialog({ type: 'create' })}>
            新建签名
          </Button>
        )}
      </header>
      {signatures.isError && (
        <Alert
          type="error"
          showIcon
          title="签名加载失败"
          action={
            <Button size="small" onClick={() => void signatures.refetch()}>
              重试
            </Button>
          }
        />
      )}
      <section className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6">
        <SmsStatusFilter value={params.status} onChange={(status) => setQuery({ status, page: 1 })} />
        <SmsSignatureTable
          projectId={projectId ?? ''}
          data={signatures.data}
          loading={signatures.isPending}
          filtered={Boolean(params.status)}
          onOpen={setDialog}
          onPageChange={(page, pageSize) =>
            setQuery(pageSize !== params.pageSize ? { page: 1, pageSize } : { page })
          }
        />
      </section>
      <SmsSignatureDialogs projectId={projectId ?? ''} dialog={dialog} onClose={() => setDialog(null)} />
    </>
  );
}
