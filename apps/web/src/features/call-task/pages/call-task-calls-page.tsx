import {
  type CallSummary,
  END_REASON_LABELS,
  type EndReason,
  INTENT_GRADE_LABELS,
} from '@callpilot/contracts';
import { Alert, Button, Table, type TableColumnsType, Tag } from 'antd';
import { useMemo } from 'react';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router';
import { useQueryCacheStore } from '@/stores/query-cache-store';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useCallTask } from '../api/get-call-task';
import { useTaskCalls } from '../api/get-task-calls';
import { CallTaskCallsFilterBar } from '../components/call-task-calls-filter-bar';
import { type GradeFilter, TASK_CALL_PAGE_SIZE, type TaskCallFilters } from '../utils/call-task-filters';
import { formatDateTime, formatSeconds, GRADE_COLORS } from '../utils/call-task-format';
import { CALL_TASK_LIST_PATH, callDetailPath, taskDetailPath } from '../utils/call-task-paths';

const LIST_KEYS = ['endReason', 'intentGrade'] as const;

/**
 * The filters and page live in the query string next to taskId, so the call detail's 返回 (which
 * comes back to the stored URL) lands on the same filtered page.
 */
function filtersOf(params: URLSearchParams): TaskCallFilters {
  const list = (key: (typeof LIST_KEYS)[number]) => (params.get(key) ?? '').split(',').filter(Boolean);
  const from = params.get('from');
  const to = params.get('to');
  const number = params.get('number');
  const talkMin = params.get('talkMin');
  const talkMax = params.get('talkMax');
  return {
    ...(from && to ? { range: { from, to } } : {}),
    endReason: list('endReason') as EndReason[],
    intentGrade: list('intentGrade') as GradeFilter[],
    ...(number ? { number } : {}),
    ...(talkMin && Number.isFinite(Number(talkMin)) ? { talkMin: Number(talkMin) } : {}),
    ...(talkMax && Number.isFinite(Number(talkMax)) ? { talkMax: Number(talkMax) } : {}),
  };
}

function searchOf(taskId: string, filters: TaskCallFilters, page: number): URLSearchParams {
  const params = new URLSearchParams({ taskId });
  if (filters.range) {
    params.set('from', filters.range.from);
    params.set('to', filters.range.to);
  }
  if (filters.endReason.length > 0) params.set('endReason', filters.endReason.join(','));
  if (filters.intentGrade.length > 0) params.set('intentGrade', filters.intentGrade.join(','));
  if (filters.number) params.set('number', filters.number);
  if (filters.talkMin !== undefined) params.set('talkMin', String(filters.talkMin));
  if (filters.talkMax !== undefined) params.set('talkMax', String(filters.talkMax));
  if (page > 1) params.set('page', String(page));
  return params;
}

export function CallTaskCallsPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const navigate = useNavigate();
  const location = useLocation();
  const [searchParams, setSearchParams] = useSearchParams();
  const taskId = searchParams.get('taskId') ?? '';
  const search = searchParams.toString();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the string is the identity of the params
  const filters = useMemo(() => filtersOf(searchParams), [search]);
  const page = Math.max(1, Number(searchParams.get('page')) || 1);
  const task = useCallTask(projectId, taskId);
  const calls = useTaskCalls(projectId, { taskId, filters, page, pageSize: TASK_CALL_PAGE_SIZE });

  const show = (next: TaskCallFilters, nextPage: number) =>
    setSearchParams(searchOf(taskId, next, nextPage), { replace: true });

  const open = (call: CallSummary) => {
    useQueryCacheStore.getState().setCallDetailBackUrl(`${location.pathname}${location.search}`);
    navigate(callDetailPath(call.id));
  };

  if (!taskId) {
    return (
      <main className="flex flex-col gap-4 p-6">
        <Alert type="warning" showIcon title="缺少任务：请从任务列表或任务详情进入" />
        <Link to={CALL_TASK_LIST_PATH}>返回任务列表</Link>
      </main>
    );
  }

  const columns: TableColumnsType<CallSummary> = [
    { title: '开始时间', dataIndex: 'startedAt', render: (value: string) => formatDateTime(value) },
    { title: '主叫', dataIndex: 'callerNumber', render: (value: string) => value || '-' },
    {
      title: '被叫',
      dataIndex: 'calleeNumber',
      render: (value: string, call) => (
        <span>
          {value || '-'}
          {call.contactName && <span className="ml-1 text-xs text-gray-500">{call.contactName}</span>}
        </span>
      ),
    },
    {
      title: '结束原因',
      dataIndex: 'endReason',
      render: (value: CallSummary['endReason'], call) =>
        value ? (
          END_REASON_LABELS[value]
        ) : call.status === 'ended' ? (
          '-'
        ) : (
          <Tag color="processing">通话中</Tag>
        ),
    },
    { title: '通话时长', dataIndex: 'talkSeconds', render: (value: number) => formatSeconds(value) },
    {
      title: '意向等级',
      dataIndex: 'intentGrade',
      render: (grade: CallSummary['intentGrade']) =>
        grade ? (
          <Tag color={GRADE_COLORS[grade]} className="!m-0">
            {grade} {INTENT_GRADE_LABELS[grade]}
          </Tag>
        ) : (
          '-'
        ),
    },
    {
      title: '操作',
      key: 'actions',
      render: (_, call) => (
        <Button type="link" size="small" className="!px-0" onClick={() => open(call)}>
          详情
        </Button>
      ),
    },
  ];

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
        <CallTaskCallsFilterBar filters={filters} onSearch={(next) => show(next, 1)} />
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
            pageSize: TASK_CALL_PAGE_SIZE,
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
