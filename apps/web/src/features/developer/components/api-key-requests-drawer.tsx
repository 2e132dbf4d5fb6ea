import { API_REQUEST_LOG_DAYS, type ApiKey, type ApiKeyRequestLogEntry } from '@callpilot/contracts';
import { Alert, Button, Drawer, Segmented, Table, type TableColumnsType, Tag } from 'antd';
import { useState } from 'react';
import type { RequestLogQuery } from '../api/developer-keys';
import { useApiKeyRequests } from '../api/get-api-key-requests';
import { formatTime, httpStatusColor } from '../utils/api-key-format';

const PAGE_SIZE = 20;

const STATUS_FILTERS: { value: RequestLogQuery['status']; label: string }[] = [
  { value: 'all', label: '全部' },
  { value: 'success', label: '成功' },
  { value: 'error', label: '失败' },
];

const columns: TableColumnsType<ApiKeyRequestLogEntry> = [
  { title: '时间', dataIndex: 'at', render: (at: string) => formatTime(at) },
  {
    title: '方法',
    dataIndex: 'method',
    render: (method: string) => <Tag className="!m-0 font-mono">{method}</Tag>,
  },
  {
    title: '路径',
    dataIndex: 'path',
    render: (path: string) => <span className="font-mono text-xs">{path}</span>,
  },
  {
    title: '状态',
    dataIndex: 'status',
    render: (status: number) => (
      <Tag color={httpStatusColor(status)} className="!m-0 font-mono">
        {status}
      </Tag>
    ),
  },
  { title: '耗时', dataIndex: 'latencyMs', render: (ms: number) => `${ms} ms` },
  { title: 'IP', dataIndex: 'ip', render: (ip: string) => <span className="font-mono text-xs">{ip}</span> },
];

/** 请求日志: every request made with the key, newest first, paged by the server. */
export function ApiKeyRequestsDrawer({
  projectId,
  apiKey,
  onClose,
}: {
  projectId: string;
  apiKey: ApiKey;
  onClose: () => void;
}) {
  const [query, setQuery] = useState<RequestLogQuery>({ page: 1, pageSize: PAGE_SIZE, status: 'all' });
  const log = useApiKeyRequests(projectId, apiKey.id, query);
  return (
    <Drawer open title={`请求日志 · ${apiKey.name}`} size={880} onClose={onClose}>
      <div className="flex flex-col gap-4">
        <div className="flex flex-wrap items-center justify-between gap-3">
          <Segmented
            aria-label="请求结果"
            value={query.status}
            options={STATUS_FILTERS}
            onChange={(status) =>
              setQuery({ ...query, status: status as RequestLogQuery['status'], page: 1 })
            }
          />
          <span className="text-xs text-gray-500">
            密钥 <span className="font-mono">{apiKey.maskedKey}</span> 的请求，保留 {API_REQUEST_LOG_DAYS} 天
          </span>
        </div>
        {log.isError && (
          <Alert
            type="error"
            showIcon
            title="请求日志加载失败"
            action={
              <Button size="small" onClick={() => void log.refetch()}>
                重试
              </Button>
            }
          />
        )}
        <Table<ApiKeyRequestLogEntry>
          rowKey="id"
          size="small"
          columns={columns}
          dataSource={log.data?.items ?? []}
          loading={log.isFetching}
          locale={{ emptyText: query.status === 'all' ? '该密钥还没有请求记录' : '没有符合条件的请求' }}
          pagination={{
            current: query.page,
            pageSize: query.pageSize,
            total: log.data?.total ?? 0,
            showSizeChanger: false,
            showTotal: (total) => `共 ${total} 条`,
            onChange: (page) => setQuery({ ...query, page }),
          }}
        />
      </div>
    </Drawer>
  );
}
