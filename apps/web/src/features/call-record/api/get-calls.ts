import type { CallList } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { type CallRecordFilters, toCallQuery } from '../utils/call-record-filters';
import { callKeys, callsUrl } from './call-record-query-keys';

export type CallListParams = { filters: CallRecordFilters; page: number; pageSize: number };

export function getCalls(projectId: string, { filters, page, pageSize }: CallListParams): Promise<CallList> {
  return get<CallList>(callsUrl(projectId), { params: { ...toCallQuery(filters), page, pageSize } });
}

export const callsQueryOptions = (projectId: string, params: CallListParams) =>
  queryOptions({
    queryKey: [...callKeys.lists(projectId), params],
    queryFn: () => getCalls(projectId, params),
    placeholderData: keepPreviousData,
  });

export function useCalls(projectId: string | undefined, params: CallListParams) {
  return useQuery({ ...callsQueryOptions(projectId ?? '', params), enabled: Boolean(projectId) });
}
