import { Button, Tooltip } from 'antd';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { FEATURE_UNAVAILABLE_TEXT, FeatureUnavailableAlert } from '@/components/feature-unavailable-alert';
import { useFeatureAvailable } from '@/hooks/use-feature-available';
import { useCanWrite } from '@/hooks/use-project-role';
import { useListCache } from '@/lib/list-cache';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useCallTasks } from '../api/get-call-tasks';
import { CallTaskFilterBar } from '../components/call-task-filter-bar';
import { CallTaskTable } from '../components/call-task-table';
import { type CallTaskFilters, TASK_PAGE_SIZE } from '../utils/call-task-filters';
import { CALL_TASK_ADD_PATH } from '../utils/call-task-paths';

export function CallTaskListPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const navigate = useNavigate();
  const available = useFeatureAvailable('concurrentCallout');
  const cache = useListCache<CallTaskFilters>('callTaskQueryCache');
  const [filters, setFilters] = useState<CallTaskFilters>(() => cache.restored?.filters ?? {});
  const [page, setPage] = useState(() => cache.restored?.page ?? 1);
  const tasks = useCallTasks(projectId, { filters, page, pageSize: TASK_PAGE_SIZE });
  const canWrite = useCanWrite();

  return (
    <main className="flex flex-col gap-6 p-6">
      <header className="flex flex-wrap items-center justify-between gap-4">
        <div>
          <h1 className="text-2xl font-semibold text-gray-900">呼出任务</h1>
          <p className="mt-1 text-sm text-gray-500">
            按设定的时段与重拨规则，用小助手批量呼叫联系人，进度实时更新。
          </p>
        </div>
        {canWrite && (
          <Tooltip title={available ? undefined : FEATURE_UNAVAILABLE_TEXT}>
            <Button type="primary" disabled={!available} onClick={() => navigate(CALL_TASK_ADD_PATH)}>
              新建任务
            </Button>
          </Tooltip>
        )}
      </header>
      <FeatureUnavailableAlert feature="concurrentCallout" />
      <section className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6">
        <CallTaskFilterBar
          projectId={projectId}
          filters={filters}
          onSearch={(next) => {
            setFilters(next);
            setPage(1);
          }}
        />
        <CallTaskTable
          projectId={projectId ?? ''}
          data={tasks.data}
          loading={tasks.isPending && Boolean(projectId)}
          page={page}
          pageSize={TASK_PAGE_SIZE}
          onPageChange={setPage}
          // Every way out to a task's pages keeps the filters and page for the way back.
          onLeave={() => cache.save(filters, page)}
          onCopied={() => setPage(1)}
        />
      </section>
    </main>
  );
}
