import type { UserSession } from '@callpilot/contracts';
import { Button, Popconfirm, Table, type TableColumnsType, Tag } from 'antd';
import dayjs from 'dayjs';
import { useNavigate } from 'react-router';
import { useEndUserSession } from '../api/end-user-session';
import { useUserSessions } from '../api/get-user-sessions';

const time = (at: string) => dayjs(at).format('YYYY-MM-DD HH:mm');

/** 登录设备: the user's live sessions; 下线 ends one at once (this device's own logs out). */
export function AccountSessionsTable() {
  const sessions = useUserSessions();
  const navigate = useNavigate();
  const end = useEndUserSession({ onLoggedOut: () => navigate('/login') });

  const columns: TableColumnsType<UserSession> = [
    {
      title: '设备',
      dataIndex: 'device',
      render: (device: string, session) => (
        <span title={session.userAgent}>
          {device}
          {session.current && (
            <Tag color="blue" className="ml-2">
              当前设备
            </Tag>
          )}
        </span>
      ),
    },
    { title: 'IP', dataIndex: 'ip', render: (ip: string) => ip || '-' },
    { title: '登录时间', dataIndex: 'createdAt', render: time },
    // The server refreshes it at most hourly while the session is in use.
    { title: '最近活动', dataIndex: 'lastSeenAt', render: time },
    {
      title: '操作',
      key: 'actions',
      width: 100,
      render: (_: unknown, session) => (
        <Popconfirm
          title={session.current ? '下线当前设备将退出登录，确定吗？' : '确定让该设备下线吗？'}
          okText="下线"
          cancelText="取消"
          onConfirm={() => end.mutateAsync(session.id)}
        >
          <Button type="link" danger size="small">
            下线
          </Button>
        </Popconfirm>
      ),
    },
  ];

  return (
    <Table<UserSession>
      rowKey="id"
      size="middle"
      columns={columns}
      dataSource={sessions.data ?? []}
      loading={sessions.isPending}
      pagination={false}
    />
  );
}
