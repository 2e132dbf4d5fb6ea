import type { ProjectMember } from '@callpilot/contracts';
import { Table, type TableColumnsType } from 'antd';
import dayjs from 'dayjs';
import { useProjectMembers } from '../api/get-project-members';
import { ROLE_LABELS } from '../utils/account-format';

const columns: TableColumnsType<ProjectMember> = [
  { title: '昵称', dataIndex: 'displayName', render: (name: string) => name || '-' },
  { title: '邮箱', dataIndex: 'email', render: (email: string) => email || '-' },
  { title: '角色', dataIndex: 'role', render: (role: ProjectMember['role']) => ROLE_LABELS[role] ?? role },
  {
    title: '加入时间',
    dataIndex: 'joinedAt',
    render: (joinedAt: string) => dayjs(joinedAt).format('YYYY-MM-DD HH:mm'),
  },
];

export function AccountMembersTable({ projectId }: { projectId: string }) {
  const members = useProjectMembers(projectId);
  return (
    <Table<ProjectMember>
      rowKey="userId"
      size="middle"
      columns={columns}
      dataSource={members.data ?? []}
      loading={members.isPending}
      pagination={false}
    />
  );
}
