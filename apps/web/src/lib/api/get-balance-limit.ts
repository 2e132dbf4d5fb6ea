import type { BalanceLimit } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';

export function getBalanceLimit(projectId: string): Promise<BalanceLimit> {
  return get<BalanceLimit>(`/api/project/${encodeURIComponent(projectId)}/balance-limit`);
}

export const balanceLimitQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: ['projects', projectId, 'balance-limit'],
    queryFn: () => getBalanceLimit(projectId),
  });

export function useBalanceLimit(projectId: string | undefined) {
  return useQuery({ ...balanceLimitQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
