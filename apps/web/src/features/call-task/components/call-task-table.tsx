import type { Paged, TaskDetail, TaskSummary } from '@callpilot/contracts';
import { Progress, Table, type TableColumnsType } from 'antd';
import { RowLink } from '@/components/row-link';
import { formatPercent } from '@/lib/format';
import { abShareOf, answerRateOf, formatDateTime } from '../utils/call-task-format';
import { taskCallsPath, taskDetailPath } from '../utils/call-task-paths';
import { CallTaskActions } from './call-task-actions';
import { CallTaskStateTag } from './call-task-state-tag';

type Props = {
  projectId: string;
  data: Paged<TaskSummary> | undefined;
  loading: boolean;
  page: number;
  pageSize: number;
  onPageChange: (page: number) => void;
  /** A row's link to the task's pages is being followed (here or in a new tab): the list keeps its state. */
  onLeave: () => void;
  onCopied: (copy: TaskDetail) => void;
};

export function CallTaskTable({
  projectId,
  data,
  loading,
  page,
  pageSize,
  onPageChange,
  onLeave,
  onCopied,
}: Props) {
  const columns: TableColumnsType<TaskSummary> = [
    {
      title: '名称',
      dataIndex: 'name',
      render: (name: string, task) => (
        <RowLink to={taskDetailPath(task.id)} onFollow={onLeave} className="font-medium">
          {name}
        </RowLink>
      ),
    },
    {
      title: '状态',
      dataIndex: 'state',
      render: (_, task) => <CallTaskStateTag state={task.state} />,
    },
    {
      title: '小助手',
      dataIndex: 'assistantName',
      render: (name: string, task) => (
        <span>
          {name || '-'}
          {task.assistantVersion !== null && (
            <span className="ml-1 text-xs text-gray-500">v{task.assistantVersion}</span>
          )}
        </span>
      ),
    },
    {
      title: '进度',
      key: 'progress',
      width: 200,
      render: (_, task) => (
        <div className="flex flex-col">
          <Progress
            percent={Math.round(task.progress * 100)}
            size="small"
            showInfo={false}
            aria-label={`${task.name} 进度`}
          />
          <span className="text-xs text-gray-500">
            {task.counts.finished}/{task.counts.total}
          </span>
        </div>
      ),
    },
    { title: '接通率', key: 'answerRate', render: (_, task) => formatPercent(answerRateOf(task.counts)) },
    { title: '意向 A/B', key: 'abShare', render: (_, task) => formatPercent(abShareOf(task.counts.byGrade)) },
    { title: '创建时间', dataIndex: 'createdAt', render: (value: string) => formatDateTime(value) },
    {
      title: '操作',
      key: 'actions',
      fixed: 'right',
      render: (_, task) => (
        <CallTaskActions
          projectId={projectId}
          task={task}
          variant="link"
          onCopied={onCopied}
          leading={
            <>
              <RowLink to={taskDetailPath(task.id)} onFollow={onLeave}>
                详情
              </RowLink>
              <RowLink to={taskCallsPath(task.id)} onFollow={onLeave}>
                通话记录
              </RowLink>
            </>
          }
        />
      ),
    },
  ];

  return (
    <Table<TaskSummary>
      rowKey="id"
      size="middle"
      scroll={{ x: 'max-content' }}
      columns={columns}
      dataSource={data?.items ?? []}
      loading={loading}
      locale={{ emptyText: '暂无呼出任务' }}
      pagination={{
        current: page,
        pageSize,
        total: data?.total ?? 0,
        showSizeChanger: false,
        showTotal: (total) => `共 ${total} 条`,
        onChange: onPageChange,
      }}
    />
  );
}
