import type { KnowledgeSegment } from '@callpilot/contracts';
import { Button, Input, Select, Switch, Table, type TableColumnsType } from 'antd';
import { useState } from 'react';
import { useKnowledgeDocuments } from '../api/get-knowledge-documents';
import { useKnowledgeSegments } from '../api/get-knowledge-segments';
import { useUpdateKnowledgeSegment } from '../api/update-knowledge-segment';
import { useKnowledgeDialogs } from './knowledge-dialogs';
import { KnowledgeSegmentText } from './knowledge-segment-text';

type Props = { projectId: string; knowledgeBaseId: string };

// The filter offers the first 100 documents; a base with more is searched by keyword.
const DOCUMENT_OPTIONS_PAGE = { page: 1, pageSize: 100 };

export function KnowledgeSegmentList({ projectId, knowledgeBaseId }: Props) {
  const [filters, setFilters] = useState<{ documentId?: string; keyword?: string }>({});
  const [pagination, setPagination] = useState({ page: 1, pageSize: 10 });
  const segments = useKnowledgeSegments(projectId, knowledgeBaseId, { ...pagination, ...filters });
  const documents = useKnowledgeDocuments(projectId, knowledgeBaseId, DOCUMENT_OPTIONS_PAGE);
  const update = useUpdateKnowledgeSegment(projectId, knowledgeBaseId);
  const dialogs = useKnowledgeDialogs();

  const filter = (next: typeof filters) => {
    setFilters({ ...filters, ...next });
    setPagination({ ...pagination, page: 1 });
  };

  const columns: TableColumnsType<KnowledgeSegment> = [
    { title: '序号', dataIndex: 'position', width: 70, render: (position: number) => `#${position}` },
    {
      title: '内容',
      key: 'content',
      render: (_, segment) => (
        <div className={segment.enabled ? undefined : 'opacity-50'}>
          <KnowledgeSegmentText segment={segment} />
          <p className="mt-1 text-xs text-gray-400">{segment.documentName}</p>
        </div>
      ),
    },
    { title: '字符数', dataIndex: 'charCount', width: 80, align: 'right' },
    {
      title: '启用',
      key: 'enabled',
      width: 80,
      render: (_, segment) => (
        <Switch
          size="small"
          checked={segment.enabled}
          aria-label={`启用分段 #${segment.position}`}
          loading={update.isPending && update.variables?.segmentId === segment.id}
          onChange={(enabled) => update.mutate({ segmentId: segment.id, body: { enabled } })}
        />
      ),
    },
    {
      title: '操作',
      key: 'actions',
      width: 80,
      render: (_, segment) => (
        <Button type="link" size="small" onClick={() => dialogs.open({ type: 'edit-segment', segment })}>
          编辑
        </Button>
      ),
    },
  ];

  return (
    <div className="flex flex-col gap-4">
      <div className="flex flex-wrap gap-3">
        <Select
          className="w-64"
          aria-label="按文档筛选"
          placeholder="全部文档"
          allowClear
          showSearch={{ optionFilterProp: 'label' }}
          value={filters.documentId}
          loading={documents.isPending}
          options={(documents.data?.items ?? []).map((document) => ({
            value: document.id,
            label: document.fileName,
          }))}
          onChange={(documentId?: string) => filter({ documentId })}
        />
        <Input.Search
          className="max-w-xs"
          placeholder="搜索分段内容"
          aria-label="搜索分段"
          allowClear
          maxLength={50}
          onSearch={(value) => filter({ keyword: value.trim() || undefined })}
        />
      </div>
      <Table<KnowledgeSegment>
        rowKey="id"
        size="middle"
        columns={columns}
        dataSource={segments.data?.items ?? []}
        loading={segments.isPending}
        locale={{
          emptyText: segments.isPending
            ? ' '
            : filters.documentId || filters.keyword
              ? '没有符合条件的分段'
              : '还没有分段。文档解析完成后，分段会出现在这里',
        }}
        pagination={{
          current: pagination.page,
          pageSize: pagination.pageSize,
          total: segments.data?.total ?? 0,
          showSizeChanger: true,
          showTotal: (total) => `共 ${total} 条`,
          onChange: (page, pageSize) =>
            setPagination({ page: pageSize === pagination.pageSize ? page : 1, pageSize }),
        }}
      />
    </div>
  );
}
