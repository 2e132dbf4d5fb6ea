import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { callKeys } from '@/entities/call/api/call-query-keys';
import { getCalls } from '@/entities/call/api/get-calls';
import { type CallFilters, toCallQuery } from '@/entities/call/utils/call-filters';

export type CallListParams = { filters: CallFilters; page: number; pageSize: number };

export const callsQueryOptions = (projectId: string, params: CallListParams) =>
  queryOptions({
    queryKey: callKeys.list(projectId, 'records', params),
    queryFn: () =>
      getCalls(projectId, { ...toCallQuery(params.filters), page: params.page, pageSize: params.pageSize }),
    placeholderData: keepPreviousData,
  });

export function useCalls(projectId: string | undefined, params: CallListParams) {
  return useQuery({ ...callsQueryOptions(projectId ?? '', params), enabled: Boolean(projectId) });
}
