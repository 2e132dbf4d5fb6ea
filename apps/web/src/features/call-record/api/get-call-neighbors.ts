import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { type CallRecordFilters, toCallQuery } from '../utils/call-record-filters';
import { callKeys, callUrl } from './call-record-query-keys';

export type CallNeighbors = { previousId: string | null; nextId: string | null };

export function getCallNeighbors(
  projectId: string,
  id: string,
  filters: CallRecordFilters,
): Promise<CallNeighbors> {
  return get<CallNeighbors>(callUrl(projectId, id, '/neighbors'), {
    params: toCallQuery(filters),
    showLoading: false,
  });
}

export const callNeighborsQueryOptions = (projectId: string, id: string, filters: CallRecordFilters) =>
  queryOptions({
    queryKey: [...callKeys.neighbors(projectId, id), filters],
    queryFn: () => getCallNeighbors(projectId, id, filters),
  });

export function useCallNeighbors(
  projectId: string | undefined,
  id: string | undefined,
  filters: CallRecordFilters,
) {
  return useQuery({
    ...callNeighborsQueryOptions(projectId ?? '', id ?? '', filters),
    enabled: Boolean(projectId && id),
  });
}
