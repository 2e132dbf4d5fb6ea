import {
  CALL_DIRECTION_LABELS,
  type CallList,
  type CallSummary,
  END_REASON_LABELS,
} from '@callpilot/contracts';
import { Table, type TableColumnsType, type TableProps, Tag } from 'antd';
import { CallCallee } from '@/entities/call/components/call-callee';
import { CallDetailLink } from '@/entities/call/components/call-detail-link';
import { CallGradeTag } from '@/entities/call/components/call-grade-tag';
import type { CallSortField, SortOrder } from '@/entities/call/utils/call-filters';
import { formatCallTime, formatTalkTime } from '@/entities/call/utils/call-format';
import { CallRecordStatus } from './call-record-status';

type Props = {
  data: CallList | undefined;
  loading: boolean;
  page: number;
  pageSize: number;
  sort: CallSortField;
  order: SortOrder;
  onPageChange: (page: number) => void;
  onSortChange: (sort: CallSortField, order: SortOrder) => void;
  /** A row's detail link is being followed (here or in a new tab): the list keeps its state. */
  onOpen: () => void;
};

const SORTABLE: readonly string[] = ['startedAt', 'talkSeconds', 'turnCount'] satisfies CallSortField[];

export function CallRecordTable({
  data,
  loading,
  page,
  pageSize,
  sort,
  order,
  onPageChange,
  onSortChange,
  onOpen,
}: Props) {
  const sortOrderOf = (field: CallSortField) =>
    sort === field ? (order === 'asc' ? ('ascend' as const) : ('descend' as const)) : null;

  const columns: TableColumnsType<CallSummary> = [
    {
      title: '开始时间',
      dataIndex: 'startedAt',
      key: 'startedAt',
      sorter: true,
      sortOrder: sortOrderOf('startedAt'),
      render: (value: string) => formatCallTime(value),
    },
    {
      title: '方向',
      dataIndex: 'direction',
      render: (value: CallSummary['direction']) => CALL_DIRECTION_LABELS[value],
    },
    { title: '主叫', dataIndex: 'callerNumber' },
    { title: '被叫', key: 'callee', render: (_, call) => <CallCallee call={call} /> },
    { title: '小助手', dataIndex: 'assistantName', render: (value: string) => value || '-' },
    {
      title: '状态',
      dataIndex: 'status',
      render: (value: CallSummary['status']) => <CallRecordStatus status={value} />,
    },
    {
      title: '结束原因',
      dataIndex: 'endReason',
      render: (value: CallSummary['endReason']) => (value ? END_REASON_LABELS[value] : '-'),
    },
    {
      title: '通话时长',
      dataIndex: 'talkSeconds',
      key: 'talkSeconds',
      sorter: true,
      sortOrder: sortOrderOf('talkSeconds'),
      render: (value: number) => formatTalkTime(value),
    },
    {
      title: '轮次',
      dataIndex: 'turnCount',
      key: 'turnCount',
      sorter: true,
      sortOrder: sortOrderOf('turnCount'),
    },
    {
      title: '意向等级',
      dataIndex: 'intentGrade',
      render: (value: CallSummary['intentGrade'], call) => (
        <CallGradeTag grade={value} human={call.humanGrade !== null} />
      ),
    },
    {
      title: '标签',
      dataIndex: 'tags',
      render: (tags: string[]) =>
        tags.length > 0 ? (
          <span className="flex flex-wrap gap-1">
            {tags.map((tag) => (
              <Tag key={tag} className="!m-0">
                {tag}
              </Tag>
            ))}
          </span>
        ) : (
          '-'
        ),
    },
    {
      title: '操作',
      key: 'actions',
      fixed: 'right',
      render: (_, call) => (
        <CallDetailLink callId={call.id} onOpen={onOpen}>
          详情
        </CallDetailLink>
      ),
    },
  ];

  const onChange: TableProps<CallSummary>['onChange'] = (_pagination, _filters, sorter, extra) => {
    if (extra.action !== 'sort') return;
    const single = Array.isArray(sorter) ? sorter[0] : sorter;
    const field = String(single?.columnKey ?? '');
    // Clearing the sort returns to the server's default, newest first.
    if (!single?.order || !SORTABLE.includes(field)) onSortChange('startedAt', 'desc');
    else onSortChange(field as CallSortField, single.order === 'ascend' ? 'asc' : 'desc');
  };

  return (
    <Table<CallSummary>
      rowKey="id"
      size="middle"
      scroll={{ x: 'max-content' }}
      columns={columns}
      dataSource={data?.items ?? []}
      loading={loading}
      onChange={onChange}
      locale={{ emptyText: '暂无通话记录' }}
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
