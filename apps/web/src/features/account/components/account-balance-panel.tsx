import type { BalanceLimit } from '@callpilot/contracts';
import { Alert, Descriptions, Skeleton, Statistic } from 'antd';
import { formatFen } from '@/lib/format';
import { RequestError } from '@/lib/request';
import { useBalanceLimit } from '../api/get-balance-limit';
import { useProjectBalance } from '../api/get-project-balance';
import { describeLimit } from '../utils/account-format';

const LIMITS: { key: keyof Omit<BalanceLimit, 'hasBalance'>; label: string; unit: string }[] = [
  { key: 'assistantLimit', label: '智能小助手', unit: '个' },
  { key: 'knowledgeLimit', label: '知识库', unit: '个' },
  { key: 'ttsCloneLimit', label: '声音克隆', unit: '个' },
  { key: 'concurrentCallin', label: '呼入并发', unit: '路' },
  { key: 'concurrentCallout', label: '呼出并发', unit: '路' },
];

// The request client swallows this one (spec section 8); the panel says it in place instead.
const isProjectDisabled = (error: unknown) =>
  error instanceof RequestError && error.serverMessage === 'Project is disabled';

export function AccountBalancePanel({ projectId }: { projectId: string }) {
  const balance = useProjectBalance(projectId);
  const limits = useBalanceLimit(projectId);

  if (isProjectDisabled(balance.error) || isProjectDisabled(limits.error)) {
    return <Alert type="warning" showIcon title="项目已停用，请联系销售开通后查看余额与额度" />;
  }
  if (balance.isPending || limits.isPending) return <Skeleton active />;
  if (balance.isError || limits.isError) return <Alert type="error" showIcon title="余额与额度加载失败" />;

  return (
    <div className="flex flex-col gap-6">
      <Statistic title="账户余额" value={formatFen(balance.data.balanceFen)} />
      <Descriptions
        title="功能额度"
        bordered
        size="small"
        column={1}
        items={LIMITS.map(({ key, label, unit }) => ({
          key,
          label,
          children: describeLimit(limits.data[key], limits.data.hasBalance, unit),
        }))}
      />
    </div>
  );
}
