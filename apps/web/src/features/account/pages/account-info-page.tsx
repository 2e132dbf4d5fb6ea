import { canManageProject } from '@callpilot/contracts';
import { Button, Empty, Skeleton, Tabs } from 'antd';
import type { ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import { ReviewsSection } from '@/entities/review/components/reviews-section';
import { useCurrentUser } from '@/lib/api/get-current-user';
import { AccountAuditLog } from '../components/account-audit-log';
import { AccountBalancePanel } from '../components/account-balance-panel';
import { AccountMembersSection } from '../components/account-members-section';
import { AccountPasswordForm } from '../components/account-password-form';
import { AccountProfileForm } from '../components/account-profile-form';
import { AccountSessionsTable } from '../components/account-sessions-table';

const TAB_KEYS = ['profile', 'password', 'balance', 'members', 'reviews', 'audit-log', 'sessions'] as const;
type TabKey = (typeof TAB_KEYS)[number];
const isTabKey = (value: string | null): value is TabKey => TAB_KEYS.includes(value as TabKey);

const NO_PROJECT = <Empty description="暂无项目" />;

export function AccountInfoPage() {
  const [searchParams, setSearchParams] = useSearchParams();
  const tab = searchParams.get('tab');
  const activeTab: TabKey = isTabKey(tab) ? tab : 'profile';
  const currentUser = useCurrentUser();
  const user = currentUser.data;
  // The spec's current project is the first one the user belongs to.
  const projectId = user?.projects[0]?.id;

  let content: ReactNode;
  if (currentUser.isPending) {
    content = <Skeleton active />;
  } else if (!user) {
    content = (
      <div className="flex items-center gap-3 text-sm text-gray-600">
        <span>用户信息加载失败</span>
        <Button size="small" onClick={() => currentUser.refetch()}>
          重试
        </Button>
      </div>
    );
  } else {
    content = (
      <Tabs
        activeKey={activeTab}
        // The tab lives in the URL so a link (or the login redirect) can open it directly.
        onChange={(key) => setSearchParams({ tab: key }, { replace: true })}
        items={[
          { key: 'profile', label: '基本资料', children: <AccountProfileForm user={user} /> },
          { key: 'password', label: '修改密码', children: <AccountPasswordForm email={user.email} /> },
          {
            key: 'balance',
            label: '余额与额度',
            children: projectId ? <AccountBalancePanel projectId={projectId} /> : NO_PROJECT,
          },
          {
            key: 'members',
            label: '成员管理',
            children: projectId ? <AccountMembersSection user={user} projectId={projectId} /> : NO_PROJECT,
          },
          {
            key: 'reviews',
            label: '发布审核',
            children: projectId ? <ReviewsSection projectId={projectId} /> : NO_PROJECT,
          },
          {
            key: 'audit-log',
            label: '操作日志',
            children: (
              <AccountAuditLog
                projectId={projectId}
                canManage={Boolean(user.projects[0] && canManageProject(user.projects[0].role))}
              />
            ),
          },
          { key: 'sessions', label: '登录设备', children: <AccountSessionsTable /> },
        ]}
      />
    );
  }

  return (
    <main className="mx-auto flex max-w-5xl flex-col gap-6 p-6">
      <header>
        <h1 className="text-2xl font-semibold text-gray-900">账户信息</h1>
        {user?.projects[0] && <p className="mt-1 text-sm text-gray-500">当前项目：{user.projects[0].name}</p>}
      </header>
      <section className="rounded-lg border border-gray-200 bg-white p-6">{content}</section>
    </main>
  );
}
