import {
  type CurrentUser,
  canManageProject,
  type ProjectMember,
  type ProjectRole,
  ROLE_LABELS,
} from '@callpilot/contracts';
import { Button, Popconfirm, Select, Table, type TableColumnsType } from 'antd';
import dayjs from 'dayjs';
import { useState } from 'react';
import { toast } from 'sonner';
import { useProjectMembers } from '../api/get-project-members';
import { useLeaveProject, useRemoveMember } from '../api/remove-member';
import { useUpdateMemberRole } from '../api/update-member-role';
import { AccountInvitationsTable } from './account-invitations-table';
import { AccountInviteDialog } from './account-invite-dialog';

const ALL_ROLES: ProjectRole[] = ['owner', 'admin', 'member', 'readonly'];

/**
 * 成员管理: everyone sees the members; owner and admin change roles, remove members and invite.
 * What an admin may not do to an owner is hidden here and refused by the server.
 */
export function AccountMembersSection({ user, projectId }: { user: CurrentUser; projectId: string }) {
  const role: ProjectRole | null = user.role ?? user.projects[0]?.role ?? null;
  const canManage = role !== null && canManageProject(role);
  const members = useProjectMembers(projectId);
  const updateRole = useUpdateMemberRole(projectId);
  const remove = useRemoveMember(projectId);
  const leave = useLeaveProject(projectId);
  const [inviting, setInviting] = useState(false);

  // An admin can neither touch an owner nor make one.
  const mayEdit = (m: ProjectMember) => canManage && (role === 'owner' || m.role !== 'owner');
  const roleOptions = ALL_ROLES.filter((r) => role === 'owner' || r !== 'owner').map((r) => ({
    value: r,
    label: ROLE_LABELS[r],
  }));

  const columns: TableColumnsType<ProjectMember> = [
    { title: '昵称', dataIndex: 'displayName', render: (name: string) => name || '-' },
    { title: '邮箱', dataIndex: 'email', render: (email: string) => email || '-' },
    {
      title: '角色',
      dataIndex: 'role',
      render: (memberRole: ProjectRole, m) =>
        mayEdit(m) ? (
          <Select<ProjectRole>
            aria-label={`${m.email} 的角色`}
            size="small"
            className="w-28"
            value={memberRole}
            options={roleOptions}
            disabled={updateRole.isPending}
            onChange={(next) =>
              updateRole.mutate(
                { userId: m.userId, role: next },
                { onSuccess: () => toast.success(`已将 ${m.email} 设为${ROLE_LABELS[next]}`) },
              )
            }
          />
        ) : (
          (ROLE_LABELS[memberRole] ?? memberRole)
        ),
    },
    {
      title: '加入时间',
      dataIndex: 'joinedAt',
      render: (joinedAt: string) => dayjs(joinedAt).format('YYYY-MM-DD HH:mm'),
    },
    ...(canManage
      ? [
          {
            title: '操作',
            key: 'actions',
            render: (_: unknown, m: ProjectMember) =>
              mayEdit(m) && m.userId !== user.id ? (
                <Popconfirm
                  title={`移除成员 ${m.email}？`}
                  description="移除后该成员立即无法访问本项目。"
                  okText="移除"
                  cancelText="取消"
                  onConfirm={() => remove.mutateAsync(m.userId).then(() => toast.success('已移除成员'))}
                >
                  <Button type="link" danger size="small">
                    移除
                  </Button>
                </Popconfirm>
              ) : null,
          },
        ]
      : []),
  ];

  return (
    <div className="flex flex-col gap-6">
      <div className="flex items-center justify-between">
        <p className="text-sm text-gray-500">
          你的角色：{role ? ROLE_LABELS[role] : '-'}
          {role === 'readonly' && '（只读成员可以查看项目的全部内容，但不能做任何修改）'}
        </p>
        <div className="flex gap-2">
          <Popconfirm
            title="退出该项目？"
            description="退出后需要重新被邀请才能访问。"
            okText="退出"
            cancelText="取消"
            onConfirm={() => leave.mutateAsync().then(() => toast.success('已退出项目'))}
          >
            <Button>退出项目</Button>
          </Popconfirm>
          {canManage && (
            <Button type="primary" onClick={() => setInviting(true)}>
              邀请成员
            </Button>
          )}
        </div>
      </div>
      <Table<ProjectMember>
        rowKey="userId"
        size="middle"
        columns={columns}
        dataSource={members.data ?? []}
        loading={members.isPending}
        pagination={false}
      />
      {canManage && <AccountInvitationsTable projectId={projectId} />}
      {canManage && (
        <AccountInviteDialog projectId={projectId} open={inviting} onClose={() => setInviting(false)} />
      )}
    </div>
  );
}
