import type { BalanceLimit } from '@callpilot/contracts';
import type { Feature } from '@/config/nav';
import { useBalanceLimit } from '@/lib/api/get-balance-limit';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';

const LIMIT_FIELD: Record<Feature, keyof Omit<BalanceLimit, 'hasBalance'>> = {
  assistant: 'assistantLimit',
  knowledge: 'knowledgeLimit',
  ttsClone: 'ttsCloneLimit',
  concurrentCallin: 'concurrentCallin',
  concurrentCallout: 'concurrentCallout',
};

/** Without a balance everything is open; with one, a feature needs a non-zero limit. */
export function isFeatureAvailable(limits: BalanceLimit | undefined, feature: Feature): boolean {
  if (!limits?.hasBalance) return true;
  return limits[LIMIT_FIELD[feature]] !== 0;
}

export function useFeatureAvailable(feature: Feature): boolean {
  const projectId = useUserStore(selectCurrentProjectId);
  const limits = useBalanceLimit(projectId);
  return isFeatureAvailable(limits.data, feature);
}
