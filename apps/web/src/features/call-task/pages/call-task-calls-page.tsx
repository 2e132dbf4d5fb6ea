import type { CallSummary } from '@callpilot/contracts';
import { Alert, Table, type TableColumnsType } from 'antd';
import { useMemo } from 'react';
import { Link, useSearchParams } from 'react-router';
import { CallCallee } from '@/entities/call/components/call-callee';
import { CallDetailLink } from '@/entities/call/components/call-detail-link';
import { CallEndReason } from '@/entities/call/components/call-end-reason';
import { CallFilterBar } from '@/entities/call/components/call-filter-bar';
import { CallGradeTag } from '@/entities/call/components/call-grade-tag';
import {
  CALL_PAGE_SIZE,
  type CallFilters,
  callFiltersFromQuery,
  emptyCallFilters,
  toCallQuery,
} from '@/entities/call/utils/call-filters';
import { formatCallTime, formatTalkTime } from '@/entities/call/utils/call-format';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useCallTask } from '../api/get-call-task';
import { useTaskCalls } from '../api/get-task-calls';
import { CALL_TASK_LIST_PATH, taskDetailPath } from '../utils/call-task-paths';

/** The records list's filters that make sense inside one task (no 方向, 小助手 or 标签). */
const FILTER_FIELDS = ['range', 'endReason', 'intentGrade', 'number', 'talkTime'] as const;

/**
 * The filters and page live in the query string next to taskId, so the call detail's 返回 (which
 * comes back to the stored URL) lands on the same filtered page.
 */
function searchOf(taskId: string, filters: CallFilters, page: number): URLSearchParams {
  const params = new URLSearchParams({ taskId, ...toCallQuery(filters) });
  if (page > 1) params.set('page', String(page));
  return params;
}

const columns: TableColumnsType<CallSummary> = [
  { title: '开始时间', dataIndex: 'startedAt', render: (value: string) => formatCallTime(value) },
  { title: '主叫', dataIndex: 'callerNumber', render: (value: string) => value || '-' },
  { title: '被叫', key: 'callee', render: (_, call) => <CallCallee call={call} /> },
  { title: '结束原因', key: 'endReason', render: (_, call) => <CallEndReason call={call} /> },
  { title: '通话时长', dataIndex: 'talkSeconds', render: (value: number) => formatTalkTime(value) },
  {
    title: '意向等级',
    dataIndex: 'intentGrade',
    render: (grade: CallSummary['intentGrade']) => <CallGradeTag grade={grade} />,
  },
  {
    title: '操作',
    key: 'actions',
    render: (_, call) => <CallDetailLink callId={call.id}>详情</CallDetailLink>,
  },
];

export function CallTaskCallsPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const [searchParams, setSearchParams] = useSearchParams();
  const taskId = searchParams.get('taskId') ?? '';
  const search = searchParams.toString();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the string is the identity of the params
  const filters = useMemo(() => callFiltersFromQuery(searchParams), [search]);
  const page = Math.max(1, Number(searchParams.get('page')) || 1);
  const task = useCallTask(projectId, taskId);
  const calls = useTaskCalls(projectId, { taskId, filters, page, pageSize: CALL_PAGE_SIZE });

  const show = (next: CallFilters, nextPage: number) =>
    setSearchParams(searchOf(taskId, next, nextPage), { replace: true });

  if (!taskId) {
    return (
      <main className="flex flex-col gap-4 p-6">
        <Alert type="warning" showIcon title="缺少任务：请从任务列表或任务详情进入" />
        <Link to={CALL_TASK_LIST_PATH}>返回任务列表</Link>
      </main>
    );
  }

  return (
    <main className="flex flex-col gap-6 p-6">
      <header className="flex flex-col gap-1">
        <Link to={taskDetailPath(taskId)} className="text-sm">
          ← 返回任务详情
        </Link>
        <h1 className="text-2xl font-semibold text-gray-900">任务通话记录</h1>
        <p className="text-sm text-gray-500">{task.data ? `任务：${task.data.name}` : ' '}</p>
      </header>
      <section className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6">
        <CallFilterBar
          projectId={projectId}
          fields={FILTER_FIELDS}
          filters={filters}
          resetTo={emptyCallFilters}
          onSearch={(next) => show(next, 1)}
        />
        <Table<CallSummary>
          rowKey="id"
          size="middle"
          scroll={{ x: 'max-content' }}
          columns={columns}
          dataSource={calls.data?.items ?? []}
          loading={calls.isPending && Boolean(projectId)}
          locale={{ emptyText: '暂无通话记录' }}
          pagination={{
            current: page,
            pageSize: CALL_PAGE_SIZE,
            total: calls.data?.total ?? 0,
            showSizeChanger: false,
            showTotal: (total) => `共 ${total} 条`,
            onChange: (next) => show(filters, next),
          }}
        />
      </section>
    </main>
  );
}
