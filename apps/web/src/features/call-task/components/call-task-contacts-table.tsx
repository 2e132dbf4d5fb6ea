import {
  CONTACT_STATUS_LABELS,
  type ContactStatus,
  END_REASON_LABELS,
  type TaskContact,
} from '@callpilot/contracts';
import { Input, Select, Table, type TableColumnsType, Tag, Tooltip } from 'antd';
import { useState } from 'react';
import { CallDetailLink } from '@/entities/call/components/call-detail-link';
import { CallGradeTag } from '@/entities/call/components/call-grade-tag';
import { useTaskContacts } from '../api/get-task-contacts';
import { CONTACT_PAGE_SIZE } from '../utils/call-task-filters';
import { formatDateTime } from '../utils/call-task-format';

const STATUS_COLORS: Record<ContactStatus, string> = {
  pending: 'default',
  dialing: 'processing',
  retry: 'gold',
  done: 'success',
  failed: 'red',
  skipped: 'default',
};

const statusOptions = (Object.keys(CONTACT_STATUS_LABELS) as ContactStatus[]).map((value) => ({
  value,
  label: CONTACT_STATUS_LABELS[value],
}));

type Props = { projectId: string; taskId: string };

export function CallTaskContactsTable({ projectId, taskId }: Props) {
  const [status, setStatus] = useState<ContactStatus | undefined>();
  const [phone, setPhone] = useState('');
  const [page, setPage] = useState(1);
  const contacts = useTaskContacts(projectId, taskId, {
    page,
    pageSize: CONTACT_PAGE_SIZE,
    ...(status ? { status } : {}),
    ...(phone ? { phone } : {}),
  });

  const columns: TableColumnsType<TaskContact> = [
    { title: '号码', dataIndex: 'phone' },
    { title: '姓名', dataIndex: 'name', render: (name: string) => name || '-' },
    {
      title: '状态',
      dataIndex: 'status',
      render: (value: ContactStatus, contact) => {
        const tag = (
          <Tag color={STATUS_COLORS[value]} className="!m-0">
            {CONTACT_STATUS_LABELS[value]}
          </Tag>
        );
        return contact.skipReason ? <Tooltip title={contact.skipReason}>{tag}</Tooltip> : tag;
      },
    },
    { title: '呼叫次数', dataIndex: 'attempts' },
    {
      title: '最后结果',
      dataIndex: 'lastEndReason',
      render: (value: TaskContact['lastEndReason']) => (value ? END_REASON_LABELS[value] : '-'),
    },
    {
      title: '意向',
      dataIndex: 'intentGrade',
      render: (grade: TaskContact['intentGrade']) => <CallGradeTag grade={grade} />,
    },
    {
      title: '下次呼叫',
      dataIndex: 'nextAttemptAt',
      render: (value: string | null, contact) => (contact.status === 'retry' ? formatDateTime(value) : '-'),
    },
    {
      title: '操作',
      key: 'actions',
      render: (_, contact) =>
        contact.lastCallId ? <CallDetailLink callId={contact.lastCallId}>查看通话</CallDetailLink> : '-',
    },
  ];

  return (
    <div className="flex flex-col gap-3">
      <div className="flex flex-wrap gap-3">
        <Select
          aria-label="联系人状态"
          allowClear
          placeholder="全部状态"
          options={statusOptions}
          value={status}
          onChange={(value: ContactStatus | undefined) => {
            setStatus(value);
            setPage(1);
          }}
          className="!w-44"
        />
        <Input.Search
          aria-label="搜索号码"
          placeholder="搜索号码"
          allowClear
          maxLength={20}
          className="!w-56"
          onSearch={(value) => {
            setPhone(value.trim());
            setPage(1);
          }}
        />
      </div>
      <Table<TaskContact>
        rowKey="id"
        size="middle"
        scroll={{ x: 'max-content' }}
        columns={columns}
        dataSource={contacts.data?.items ?? []}
        loading={contacts.isPending}
        locale={{ emptyText: status || phone ? '没有符合条件的联系人' : '还没有联系人' }}
        pagination={{
          current: page,
          pageSize: CONTACT_PAGE_SIZE,
          total: contacts.data?.total ?? 0,
          showSizeChanger: false,
          showTotal: (total) => `共 ${total} 条`,
          onChange: setPage,
        }}
      />
    </div>
  );
}
