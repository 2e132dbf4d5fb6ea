import type { KnowledgeTerm, Paged } from '@callpilot/contracts';
import { Button, Empty, Popconfirm, Table, type TableColumnsType, Tag } from 'antd';
import { toast } from 'sonner';
import { serverPagination } from '@/components/server-pagination';
import { useDeleteKnowledgeTerm } from '../api/delete-knowledge-term';
import { formatTime } from '../utils/knowledge-format';

type Props = {
  projectId: string;
  data: Paged<KnowledgeTerm> | undefined;
  loading: boolean;
  keyword: string;
  onAdd: () => void;
  onEdit: (term: KnowledgeTerm) => void;
  onPageChange: (page: number, pageSize: number) => void;
};

export function KnowledgeTermTable({
  projectId,
  data,
  loading,
  keyword,
  onAdd,
  onEdit,
  onPageChange,
}: Props) {
  const remove = useDeleteKnowledgeTerm(projectId, { onSuccess: () => toast.success('词条已删除') });

  const columns: TableColumnsType<KnowledgeTerm> = [
    {
      title: '标准词',
      dataIndex: 'standard',
      width: 180,
      render: (text: string) => <span className="font-medium">{text}</span>,
    },
    {
      title: '口语说法',
      dataIndex: 'variants',
      render: (variants: string[]) => (
        <span className="flex flex-wrap gap-1">
          {variants.map((variant) => (
            <Tag key={variant} className="m-0">
              {variant}
            </Tag>
          ))}
        </span>
      ),
    },
    { title: '更新时间', dataIndex: 'updatedAt', width: 160, render: formatTime },
    {
      title: '操作',
      key: 'actions',
      width: 140,
      render: (_, term) => (
        <span className="flex gap-1">
          <Button type="link" size="small" onClick={() => onEdit(term)}>
            编辑
          </Button>
          <Popconfirm
            title={`删除词条「${term.standard}」？`}
            description="删除后，来电者的这些说法不再替换为标准词。"
            okText="删除"
            okButtonProps={{ danger: true }}
            cancelText="取消"
            onConfirm={() => remove.mutateAsync(term.id)}
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
    <Empty description={`没有包含「${keyword}」的词条`} />
  ) : (
    <Empty description="还没有自定义词条。把来电者的口语说法对应到知识库里的标准词，助手就能听懂。">
      <Button type="primary" onClick={onAdd}>
        添加词条
      </Button>
    </Empty>
  );

  return (
    <Table<KnowledgeTerm>
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
