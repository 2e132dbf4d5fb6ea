import { Empty, Spin, Table, Tag } from 'antd';
import { useBuiltinKnowledgeTerms } from '../api/get-builtin-knowledge-terms';

/** The built-in entries, read-only; rendered only once its panel is opened, so fetched then. */
export function KnowledgeBuiltinTerms({ projectId }: { projectId: string }) {
  const builtin = useBuiltinKnowledgeTerms(projectId);
  if (builtin.isPending) return <Spin />;
  const entries = builtin.data ?? [];
  if (entries.length === 0) return <Empty description="暂无内置词条" />;
  return (
    <Table
      rowKey="standard"
      size="small"
      dataSource={entries}
      pagination={entries.length > 50 ? { pageSize: 50, showSizeChanger: false } : false}
      columns={[
        { title: '标准词', dataIndex: 'standard', width: 180 },
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
      ]}
    />
  );
}
