import { AUDIT_ACTION_LABELS, type AuditAction, type AuditEntryView } from '@callpilot/contracts';
import { Alert, Button, DatePicker, Form, Input, Select, Table, type TableColumnsType } from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { useState } from 'react';
import { useExportAuditLog } from '../api/export-audit-log';
import { type AuditLogFilterValues, useAuditLog } from '../api/get-audit-log';

type FormValues = { action?: AuditAction; actor?: string; range?: [Dayjs, Dayjs] | null };

const actionOptions = Object.entries(AUDIT_ACTION_LABELS).map(([value, label]) => ({ value, label }));

const target = (entry: AuditEntryView) => entry.summary || entry.targetId || '-';

const columns: TableColumnsType<AuditEntryView> = [
  {
    title: '时间',
    dataIndex: 'createdAt',
    width: 170,
    render: (at: string) => dayjs(at).format('YYYY-MM-DD HH:mm:ss'),
  },
  { title: '操作人', dataIndex: 'actor', render: (actor: string) => actor || '-' },
  { title: '操作', dataIndex: 'actionLabel', width: 140 },
  { title: '对象', key: 'target', render: (_: unknown, entry) => target(entry) },
  { title: 'IP', dataIndex: 'ip', width: 140, render: (ip: string) => ip || '-' },
];

/**
 * 操作日志. Owners and admins see the project's log and may export it; everyone else sees only
 * their own account's events (the server answers 403 to them for the project's log).
 */
export function AccountAuditLog({ projectId, canManage }: { projectId?: string; canManage: boolean }) {
  const scope = canManage && projectId ? projectId : null;
  const [filters, setFilters] = useState<AuditLogFilterValues>({});
  const [page, setPage] = useState({ page: 1, pageSize: 20 });
  const log = useAuditLog(scope, { ...filters, ...page });
  const exporter = useExportAuditLog(scope ?? '');
  const [form] = Form.useForm<FormValues>();

  const submit = (values: FormValues) => {
    const [start, end] = values.range ?? [];
    setFilters({
      action: values.action,
      actor: scope ? values.actor?.trim() || undefined : undefined,
      ...(start && end ? { from: start.toISOString(), to: end.toISOString() } : {}),
    });
    setPage((p) => ({ ...p, page: 1 }));
  };

  return (
    <div className="flex flex-col gap-4">
      {!scope && (
        <Alert
          type="info"
          showIcon
          message="仅项目所有者和管理员可查看项目的操作日志；这里显示你自己账号的登录与安全事件。"
        />
      )}
      <Form form={form} layout="inline" className="gap-y-3" onFinish={submit}>
        <Form.Item name="action" label="操作类型">
          <Select
            aria-label="操作类型"
            allowClear
            placeholder="全部"
            options={actionOptions}
            className="!w-44"
          />
        </Form.Item>
        {scope && (
          <Form.Item name="actor" label="操作人">
            <Input aria-label="操作人" placeholder="邮箱或密钥名称" allowClear className="w-44" />
          </Form.Item>
        )}
        <Form.Item name="range" label="时间范围">
          <DatePicker.RangePicker showTime aria-label="时间范围" />
        </Form.Item>
        <Form.Item>
          <Button type="primary" htmlType="submit">
            查询
          </Button>
        </Form.Item>
        {scope && (
          <Form.Item>
            <Button loading={exporter.isPending} onClick={() => exporter.mutate(filters)}>
              导出
            </Button>
          </Form.Item>
        )}
      </Form>
      <Table<AuditEntryView>
        rowKey="id"
        size="middle"
        columns={columns}
        dataSource={log.data?.items ?? []}
        loading={log.isFetching}
        pagination={{
          current: page.page,
          pageSize: page.pageSize,
          total: log.data?.total ?? 0,
          showTotal: (total) => `共 ${total} 条，保留 180 天`,
          onChange: (next, pageSize) => setPage({ page: pageSize === page.pageSize ? next : 1, pageSize }),
        }}
      />
    </div>
  );
}
