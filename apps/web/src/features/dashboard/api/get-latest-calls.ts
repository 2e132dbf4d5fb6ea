import { queryOptions, useQuery } from '@tanstack/react-query';
import { callKeys } from '@/entities/call/api/call-query-keys';
import { getCalls } from '@/entities/call/api/get-calls';

export const LATEST_CALLS_COUNT = 8;

export const latestCallsQueryOptions = (projectId: string) =>
  queryOptions({
    // Under the calls' list key, so the records' writes refresh this too.
    queryKey: callKeys.list(projectId, 'latest'),
    queryFn: () => getCalls(projectId, { page: 1, pageSize: LATEST_CALLS_COUNT }, { showLoading: false }),
    refetchInterval: 60_000,
  });

export function useLatestCalls(projectId: string | undefined) {
  return useQuery({ ...latestCallsQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
