import type { SmsBatch } from '@callpilot/contracts';
import { Alert, Button, Progress, Table } from 'antd';
import { useState } from 'react';
import { Link } from 'react-router';
import { downloadSmsBatchRejects } from '../api/download-sms-batch-file';
import { useSmsBatches } from '../api/get-sms-batches';
import { formatSmsTime } from '../utils/sms-format';
import { batchRecordsHref } from './sms-record-links';

/** Recent batches with how far their accepted rows have got (refreshes while any still waits). */
export function SmsBatchTable({ projectId }: { projectId: string }) {
  const [params, setParams] = useState({ page: 1, pageSize: 10 });
  const batches = useSmsBatches(projectId, params);
  if (batches.isError) {
    return (
      <Alert
        type="error"
        showIcon
        title="批量发送记录加载失败"
        action={
          <Button size="small" onClick={() => void batches.refetch()}>
            重试
          </Button>
        }
      />
    );
  }
  return (
    <Table<SmsBatch>
      rowKey="id"
      size="small"
      loading={batches.isPending}
      dataSource={batches.data?.items}
      locale={{ emptyText: '还没有批量发送记录' }}
      pagination={{
        current: params.page,
        pageSize: params.pageSize,
        total: batches.data?.total ?? 0,
        showSizeChanger: false,
        onChange: (page) => setParams((current) => ({ ...current, page })),
      }}
      columns={[
        { title: '提交时间', dataIndex: 'createdAt', render: (at: string) => formatSmsTime(at) },
        { title: '文件', dataIndex: 'fileName' },
        {
          title: '签名 / 模板',
          render: (_, batch) => `【${batch.signatureName}】${batch.templateName}`,
        },
        { title: '总行数', dataIndex: 'total' },
        { title: '通过', dataIndex: 'accepted' },
        { title: '未通过', dataIndex: 'rejected' },
        {
          title: '进度',
          render: (_, batch) => (
            <div className="min-w-40">
              <Progress
                size="small"
                percent={batch.accepted ? Math.round((batch.sent / batch.accepted) * 100) : 100}
                aria-label={`${batch.fileName} 发送进度`}
              />
              <span className="text-xs text-gray-500">
                已发 {batch.sent}，成功 {batch.delivered}，失败 {batch.failed}，待发 {batch.waiting}
              </span>
            </div>
          ),
        },
        {
          title: '操作',
          render: (_, batch) => (
            <div className="flex flex-wrap items-center gap-2">
              <Link to={batchRecordsHref(batch.id)}>发送记录</Link>
              {batch.rejected > 0 && (
                <Button
                  type="link"
                  size="small"
                  onClick={() => void downloadSmsBatchRejects(projectId, batch.id).catch(() => undefined)}
                >
                  下载未通过行
                </Button>
              )}
            </div>
          ),
        },
      ]}
    />
  );
}
