import type { KnowledgeBase, Paged } from '@callpilot/contracts';
import { Button, Empty, Popconfirm, Table, type TableColumnsType, Tag } from 'antd';
import { Link } from 'react-router';
import { toast } from 'sonner';
import { serverPagination } from '@/components/server-pagination';
import { useDeleteKnowledgeBase } from '../api/delete-knowledge-base';
import { formatTime } from '../utils/knowledge-format';
import { knowledgeDetailPath } from '../utils/knowledge-paths';
import { useKnowledgeDialogs } from './knowledge-dialogs';

type Props = {
  projectId: string;
  data: Paged<KnowledgeBase> | undefined;
  loading: boolean;
  keyword: string;
  canCreate: boolean;
  onPageChange: (page: number, pageSize: number) => void;
};

export function KnowledgeBaseTable({ projectId, data, loading, keyword, canCreate, onPageChange }: Props) {
  const dialogs = useKnowledgeDialogs();
  const remove = useDeleteKnowledgeBase(projectId, { onSuccess: () => toast.success('知识库已删除') });

  const columns: TableColumnsType<KnowledgeBase> = [
    {
      title: '名称',
      dataIndex: 'name',
      render: (name: string, base) => (
        <span className="flex items-center gap-2">
          <Link to={knowledgeDetailPath(base.id)} className="font-medium">
            {name}
          </Link>
          {base.pendingCount > 0 && <Tag color="processing">处理中</Tag>}
        </span>
      ),
    },
    {
      title: '描述',
      dataIndex: 'description',
      ellipsis: true,
      render: (description: string) => description || <span className="text-gray-400">-</span>,
    },
    { title: '文档数', dataIndex: 'documentCount', width: 90, align: 'right' },
    { title: '分段数', dataIndex: 'segmentCount', width: 90, align: 'right' },
    { title: '更新时间', dataIndex: 'updatedAt', width: 160, render: formatTime },
    {
      title: '操作',
      key: 'actions',
      width: 140,
      render: (_, base) => (
        <span className="flex gap-1">
          <Button type="link" size="small" onClick={() => dialogs.open({ type: 'edit-base', base })}>
            编辑
          </Button>
          <Popconfirm
            title={`删除知识库「${base.name}」？`}
            description="其中的文档和分段将一并删除，引用它的助手将不再能据此回答。"
            okText="删除"
            okButtonProps={{ danger: true }}
            cancelText="取消"
            onConfirm={() => remove.mutateAsync(base.id)}
          >
            <Button type="link" size="small" danger>
              删除
            </Button>
          </Popconfirm>
        </span>
      ),
    },
  ];

  const empty = keyword ? (
    <Empty description={`没有名称包含「${keyword}」的知识库`} />
  ) : (
    <Empty description="还没有知识库。新建一个并上传文档，助手就能据此回答客户的问题。">
      <Button type="primary" disabled={!canCreate} onClick={() => dialogs.open({ type: 'create-base' })}>
        新建知识库
      </Button>
    </Empty>
  );

  return (
    <Table<KnowledgeBase>
      rowKey="id"
      size="middle"
      columns={columns}
      dataSource={data?.items ?? []}
      loading={loading}
      locale={{ emptyText: loading ? ' ' : empty }}
      pagination={serverPagination(data, onPageChange)}
    />
  );
}
