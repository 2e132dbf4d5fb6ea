import { type ProjectInvitation, ROLE_LABELS } from '@callpilot/contracts';
import { Button, Popconfirm, Table, type TableColumnsType, Tooltip } from 'antd';
import dayjs from 'dayjs';
import { toast } from 'sonner';
import { useInvitations } from '../api/get-invitations';
import { useRenewInvitationLink } from '../api/renew-invitation-link';
import { useRevokeInvitation } from '../api/revoke-invitation';

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** Pending invitations of the project, for owner and admin. */
export function AccountInvitationsTable({ projectId }: { projectId: string }) {
  const invitations = useInvitations(projectId);
  const revoke = useRevokeInvitation(projectId);
  const renew = useRenewInvitationLink(projectId);

  const copyLink = async (id: string) => {
    const { link } = await renew.mutateAsync(id);
    if (await copyText(link)) toast.success('已复制新的邀请链接，原链接已失效');
    else toast.info(`邀请链接：${link}`, { duration: 30_000 });
  };

  const columns: TableColumnsType<ProjectInvitation> = [
    { title: '邮箱', dataIndex: 'email' },
    { title: '角色', dataIndex: 'role', render: (role: ProjectInvitation['role']) => ROLE_LABELS[role] },
    { title: '邀请人', dataIndex: 'invitedBy' },
    {
      title: '有效期至',
      dataIndex: 'expiresAt',
      render: (at: string) => dayjs(at).format('YYYY-MM-DD HH:mm'),
    },
    {
      title: '操作',
      key: 'actions',
      render: (_: unknown, inv) => (
        <div className="flex gap-1">
          <Tooltip title="生成新链接并复制（原链接失效，有效期重新计算 7 天）">
            <Button type="link" size="small" loading={renew.isPending} onClick={() => copyLink(inv.id)}>
              复制链接
            </Button>
          </Tooltip>
          <Popconfirm
            title={`撤销对 ${inv.email} 的邀请？`}
            okText="撤销"
            cancelText="取消"
            onConfirm={() => revoke.mutateAsync(inv.id).then(() => toast.success('已撤销邀请'))}
          >
            <Button type="link" danger size="small">
              撤销
            </Button>
          </Popconfirm>
        </div>
      ),
    },
  ];

  return (
    <section className="flex flex-col gap-2">
      <h3 className="text-base font-medium text-gray-900">待接受的邀请</h3>
      <Table<ProjectInvitation>
        rowKey="id"
        size="small"
        columns={columns}
        dataSource={invitations.data ?? []}
        loading={invitations.isPending}
        pagination={false}
        locale={{ emptyText: '暂无待接受的邀请' }}
      />
    </section>
  );
}
