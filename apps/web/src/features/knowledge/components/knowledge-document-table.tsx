import { KNOWLEDGE_DOCUMENT_STATUS_LABELS, type KnowledgeDocument } from '@callpilot/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { Button, Popconfirm, Progress, Table, type TableColumnsType, Tag, Tooltip } from 'antd';
import { useEffect, useRef, useState } from 'react';
import { toast } from 'sonner';
import { useDeleteKnowledgeDocument } from '../api/delete-knowledge-document';
import { isDocumentPending, useKnowledgeDocuments } from '../api/get-knowledge-documents';
import { knowledgeKeys } from '../api/knowledge-query-keys';
import { useReindexKnowledgeDocument } from '../api/reindex-knowledge-document';
import { formatBytes } from '../utils/knowledge-files';
import { formatTime, STATUS_TAG_COLORS } from '../utils/knowledge-format';

type Props = { projectId: string; knowledgeBaseId: string };

function DocumentStatus({ document }: { document: KnowledgeDocument }) {
  const tag = (
    <Tag color={STATUS_TAG_COLORS[document.status]} className="m-0">
      {KNOWLEDGE_DOCUMENT_STATUS_LABELS[document.status]}
    </Tag>
  );
  if (document.status === 'parsing') {
    return (
      <div className="flex min-w-40 items-center gap-2">
        {tag}
        <Progress percent={document.progress} size="small" aria-label={`${document.fileName} 解析进度`} />
      </div>
    );
  }
  if (document.status === 'failed') {
    return (
      <div className="flex flex-col items-start gap-1">
        {tag}
        <Tooltip title={document.error}>
          <span className="line-clamp-2 text-xs text-[#FF5656]">{document.error || '解析失败'}</span>
        </Tooltip>
      </div>
    );
  }
  if (document.error) {
    // Ready, with a note of what the import skipped (rows, similar questions).
    return (
      <div className="flex flex-col items-start gap-1">
        {tag}
        <Tooltip title={document.error}>
          <span className="line-clamp-2 text-xs text-[#FA8C16]">{document.error}</span>
        </Tooltip>
      </div>
    );
  }
  return tag;
}

export function KnowledgeDocumentTable({ projectId, knowledgeBaseId }: Props) {
  const [pagination, setPagination] = useState({ page: 1, pageSize: 10 });
  const documents = useKnowledgeDocuments(projectId, knowledgeBaseId, pagination);
  const remove = useDeleteKnowledgeDocument(projectId, knowledgeBaseId);
  const reindex = useReindexKnowledgeDocument(projectId, knowledgeBaseId);
  const queryClient = useQueryClient();

  // When the last pending document settles, its segments exist and the counts have changed.
  const pending = documents.data?.items.some(isDocumentPending) ?? false;
  const wasPending = useRef(false);
  useEffect(() => {
    if (wasPending.current && !pending) {
      void queryClient.invalidateQueries({ queryKey: knowledgeKeys.base(projectId, knowledgeBaseId) });
      void queryClient.invalidateQueries({ queryKey: knowledgeKeys.lists(projectId) });
    }
    wasPending.current = pending;
  }, [pending, queryClient, projectId, knowledgeBaseId]);

  const columns: TableColumnsType<KnowledgeDocument> = [
    { title: '文件名', dataIndex: 'fileName', ellipsis: true },
    {
      title: '类型',
      dataIndex: 'fileType',
      width: 110,
      render: (fileType: string, document) => (
        <span className="flex items-center gap-1">
          {fileType.toUpperCase()}
          {document.kind === 'qa' && <Tag className="m-0">问答对</Tag>}
        </span>
      ),
    },
    { title: '大小', dataIndex: 'sizeBytes', width: 100, render: formatBytes },
    {
      title: '分段数',
      dataIndex: 'segmentCount',
      width: 80,
      align: 'right',
      render: (count: number, document) => (document.status === 'ready' ? count : '-'),
    },
    {
      title: '状态',
      key: 'status',
      width: 240,
      render: (_, document) => <DocumentStatus document={document} />,
    },
    { title: '上传时间', dataIndex: 'createdAt', width: 150, render: formatTime },
    {
      title: '操作',
      key: 'actions',
      width: 150,
      render: (_, document) => (
        <span className="flex gap-1">
          <Button
            type="link"
            size="small"
            disabled={isDocumentPending(document)}
            onClick={() =>
              reindex.mutate(document.id, {
                onSuccess: () => toast.success(`「${document.fileName}」已重新加入解析队列`),
              })
            }
          >
            重新解析
          </Button>
          <Popconfirm
            title={`删除文档「${document.fileName}」？`}
            description="它的分段将一并删除。"
            okText="删除"
            okButtonProps={{ danger: true }}
            cancelText="取消"
            onConfirm={() =>
              remove.mutateAsync(document.id, { onSuccess: () => toast.success('文档已删除') })
            }
          >
            <Button type="link" size="small" danger>
              删除
            </Button>
          </Popconfirm>
        </span>
      ),
    },
  ];

  return (
    <Table<KnowledgeDocument>
      rowKey="id"
      size="middle"
      columns={columns}
      dataSource={documents.data?.items ?? []}
      loading={documents.isPending}
      locale={{ emptyText: documents.isPending ? ' ' : '还没有文档，请在上方上传' }}
      pagination={{
        current: pagination.page,
        pageSize: pagination.pageSize,
        total: documents.data?.total ?? 0,
        showTotal: (total) => `共 ${total} 条`,
        onChange: (page, pageSize) =>
          setPagination({ page: pageSize === pagination.pageSize ? page : 1, pageSize }),
      }}
    />
  );
}
