import { Alert, Button, Empty, Input, Upload } from 'antd';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { toast } from 'sonner';
import { ivrFlowEditPath } from '@/config/paths';
import { useCanWrite } from '@/hooks/use-project-role';
import { RequestError } from '@/lib/request';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import type { FlowListQuery } from '../api/flow-keys';
import { useFlows } from '../api/get-flows';
import { useImportFlow } from '../api/import-flow';
import { useIvrDialogs } from '../components/ivr-dialogs';
import { IvrFlowTable } from '../components/ivr-flow-table';
import { IvrTabs } from '../components/ivr-tabs';

export const FLOW_PAGE_SIZE = 20;

/** 通话流程: the project's IVR flows, what state each is in and which numbers it answers. */
export function IvrFlowsPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const navigate = useNavigate();
  const dialogs = useIvrDialogs();
  const [query, setQuery] = useState<FlowListQuery>({ page: 1, pageSize: FLOW_PAGE_SIZE });
  const [keywordInput, setKeywordInput] = useState('');
  const flows = useFlows(projectId, query);
  const importer = useImportFlow(projectId ?? '');

  const importFile = (file: File) =>
    importer.mutate(file, {
      onSuccess: (created) => {
        toast.success(`已导入「${created.name}」`);
        navigate(ivrFlowEditPath(created.id));
      },
      onError: (error) => {
        // The request client has shown the server's refusal; a file that is not JSON never left.
        if (!(error instanceof RequestError)) toast.error(error.message);
      },
    });

  const canWrite = useCanWrite();
  const createButton = canWrite ? (
    <Button type="primary" onClick={() => dialogs.open({ type: 'create-flow' })}>
      新建流程
    </Button>
  ) : null;

  return (
    <main className="flex flex-col gap-6 p-6">
      <h1 className="text-2xl font-semibold text-gray-900">通话流程</h1>
      <IvrTabs />
      <header className="flex flex-wrap items-center justify-between gap-4">
        <div>
          <h2 className="text-lg font-semibold text-gray-900">流程列表</h2>
          <p className="mt-1 text-sm text-gray-500">
            流程决定来电如何被接待；发布后在「号码管理」把号码绑定到流程，拨打该号码的来电按流程的已发布版本进行。
          </p>
        </div>
        <span className="flex flex-wrap gap-2">
          <Upload
            accept=".json,application/json"
            showUploadList={false}
            disabled={importer.isPending}
            beforeUpload={(file) => {
              importFile(file);
              return Upload.LIST_IGNORE;
            }}
          >
            <Button loading={importer.isPending}>导入</Button>
          </Upload>
          {createButton}
        </span>
      </header>
      {flows.isError && (
        <Alert
          type="error"
          showIcon
          title="流程加载失败"
          action={
            <Button size="small" onClick={() => void flows.refetch()}>
              重试
            </Button>
          }
        />
      )}
      <section className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6">
        <Input.Search
          aria-label="搜索流程"
          placeholder="按名称或说明搜索"
          allowClear
          className="max-w-xs"
          value={keywordInput}
          onChange={(event) => setKeywordInput(event.target.value)}
          onSearch={(keyword) => {
            const trimmed = keyword.trim();
            setQuery({ page: 1, pageSize: query.pageSize, ...(trimmed ? { keyword: trimmed } : {}) });
          }}
        />
        <IvrFlowTable
          projectId={projectId ?? ''}
          flows={flows.data?.items ?? []}
          loading={flows.isFetching && Boolean(projectId)}
          pagination={{ page: query.page, pageSize: query.pageSize, total: flows.data?.total ?? 0 }}
          onPageChange={(page, pageSize) =>
            setQuery({ ...query, page: pageSize === query.pageSize ? page : 1, pageSize })
          }
          emptyText={
            query.keyword ? (
              <Empty description="没有符合条件的流程" />
            ) : (
              <Empty
                description={
                  <span className="flex flex-col gap-1">
                    <span>还没有通话流程</span>
                    <span className="text-sm text-gray-500">
                      通话流程把来电的接待步骤画成一张图：放音欢迎、按键菜单、判断工作时间、查询业务系统、转智能小助手或人工、留言和发短信。
                    </span>
                  </span>
                }
              >
                {createButton}
              </Empty>
            )
          }
        />
      </section>
    </main>
  );
}
