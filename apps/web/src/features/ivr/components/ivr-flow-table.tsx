import type { FlowSummary } from '@callpilot/contracts';
import { Button, Popconfirm, Table, type TableColumnsType, Tag } from 'antd';
import dayjs from 'dayjs';
import type { ReactNode } from 'react';
import { Link, useNavigate } from 'react-router';
import { toast } from 'sonner';
import { ivrFlowEditPath, paths } from '@/config/paths';
import { useCopyFlow } from '../api/copy-flow';
import { useDeleteFlow } from '../api/delete-flow';
import { useExportFlow } from '../api/export-flow';

const linkButton = { type: 'link', size: 'small', className: '!px-0' } as const;

/** 草稿 / 已发布 vN / 有未发布修改: what callers hear now, and whether the draft differs from it. */
export function IvrFlowStatus({ flow }: { flow: Pick<FlowSummary, 'status' | 'publishedVersion'> }) {
  if (flow.publishedVersion === null) return <Tag className="!m-0">草稿</Tag>;
  return (
    <span className="flex flex-wrap gap-1">
      <Tag color="green" className="!m-0">
        已发布 v{flow.publishedVersion}
      </Tag>
      {flow.status === 'changed' && (
        <Tag color="orange" className="!m-0">
          有未发布修改
        </Tag>
      )}
    </span>
  );
}

/** The project's call flows, one page of them; the page owns paging and the keyword. */
export function IvrFlowTable({
  projectId,
  flows,
  loading,
  pagination,
  onPageChange,
  emptyText,
}: {
  projectId: string;
  flows: FlowSummary[];
  loading: boolean;
  pagination: { page: number; pageSize: number; total: number };
  onPageChange: (page: number, pageSize: number) => void;
  emptyText: ReactNode;
}) {
  const navigate = useNavigate();
  const copy = useCopyFlow(projectId);
  const exporter = useExportFlow(projectId);
  const remove = useDeleteFlow(projectId);

  const columns: TableColumnsType<FlowSummary> = [
    {
      title: '名称',
      dataIndex: 'name',
      render: (_, flow) => (
        <div className="flex flex-col">
          <Link to={ivrFlowEditPath(flow.id)} className="font-medium">
            {flow.name}
          </Link>
          {flow.description && <span className="text-xs text-gray-500">{flow.description}</span>}
        </div>
      ),
    },
    { title: '状态', key: 'status', width: 200, render: (_, flow) => <IvrFlowStatus flow={flow} /> },
    {
      title: '绑定号码',
      dataIndex: 'numbers',
      render: (numbers: string[]) =>
        numbers.length === 0 ? (
          <span className="text-gray-400">未绑定</span>
        ) : (
          <span className="flex flex-col">
            {numbers.map((number) => (
              <Link key={number} to={paths.ivrNumbers} className="font-mono">
                {number}
              </Link>
            ))}
          </span>
        ),
    },
    { title: '近 7 天通话', dataIndex: 'calls7d', width: 110, align: 'right' },
    {
      title: '更新时间',
      dataIndex: 'updatedAt',
      width: 160,
      render: (updatedAt: string) => dayjs(updatedAt).format('YYYY-MM-DD HH:mm'),
    },
    {
      title: '操作',
      key: 'actions',
      fixed: 'right',
      render: (_, flow) => (
        <span className="flex flex-wrap gap-x-3">
          <Button {...linkButton} onClick={() => navigate(ivrFlowEditPath(flow.id))}>
            编辑
          </Button>
          <Button
            {...linkButton}
            loading={copy.isPending && copy.variables === flow.id}
            onClick={() =>
              copy.mutate(flow.id, { onSuccess: (created) => toast.success(`已复制为「${created.name}」`) })
            }
          >
            复制
          </Button>
          <Button
            {...linkButton}
            loading={exporter.isPending && exporter.variables === flow.id}
            onClick={() => exporter.mutate(flow.id)}
          >
            导出
          </Button>
          <Popconfirm
            title={`删除「${flow.name}」？`}
            description="删除后不可恢复。绑定了号码或被其他流程用作子流程的流程不能删除。"
            okText="删除"
            okButtonProps={{ danger: true }}
            cancelText="取消"
            onConfirm={() =>
              remove
                .mutateAsync(flow.id)
                .then(() => toast.success(`已删除流程「${flow.name}」`))
                // The request client has shown why (the numbers bound to it, for one); the row stays.
                .catch(() => undefined)
            }
          >
            <Button {...linkButton} danger>
              删除
            </Button>
          </Popconfirm>
        </span>
      ),
    },
  ];

  return (
    <Table<FlowSummary>
      rowKey="id"
      size="middle"
      scroll={{ x: 'max-content' }}
      columns={columns}
      dataSource={flows}
      loading={loading}
      locale={{ emptyText }}
      pagination={{
        current: pagination.page,
        pageSize: pagination.pageSize,
        total: pagination.total,
        showSizeChanger: true,
        showTotal: (count) => `共 ${count} 条`,
        onChange: onPageChange,
      }}
    />
  );
}
