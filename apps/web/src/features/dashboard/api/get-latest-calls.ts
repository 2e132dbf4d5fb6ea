import type { CallList } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';

export const LATEST_CALLS_COUNT = 8;

export function getLatestCalls(projectId: string): Promise<CallList> {
  return get<CallList>(`/api/project/${encodeURIComponent(projectId)}/calls`, {
    params: { page: 1, pageSize: LATEST_CALLS_COUNT },
    showLoading: false,
  });
}

export const latestCallsQueryOptions = (projectId: string) =>
  queryOptions({
    // Under the call records' list key, so their writes refresh this too.
    queryKey: ['projects', projectId, 'calls', 'list', 'latest'],
    queryFn: () => getLatestCalls(projectId),
    refetchInterval: 60_000,
  });

export function useLatestCalls(projectId: string | undefined) {
  return useQuery({ ...latestCallsQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
