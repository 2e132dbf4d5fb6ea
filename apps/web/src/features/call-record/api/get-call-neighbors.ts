import { queryOptions, useQuery } from '@tanstack/react-query';
import { callKeys, callUrl } from '@/entities/call/api/call-query-keys';
import { type CallFilters, toCallQuery } from '@/entities/call/utils/call-filters';
import { get } from '@/lib/request';

export type CallNeighbors = { previousId: string | null; nextId: string | null };

export function getCallNeighbors(
  projectId: string,
  id: string,
  filters: CallFilters,
): Promise<CallNeighbors> {
  return get<CallNeighbors>(callUrl(projectId, id, '/neighbors'), {
    params: toCallQuery(filters),
    showLoading: false,
  });
}

export const callNeighborsQueryOptions = (projectId: string, id: string, filters: CallFilters) =>
  queryOptions({
    queryKey: [...callKeys.neighbors(projectId, id), filters],
    queryFn: () => getCallNeighbors(projectId, id, filters),
  });

export function useCallNeighbors(
  projectId: string | undefined,
  id: string | undefined,
  filters: CallFilters,
) {
  return useQuery({
    ...callNeighborsQueryOptions(projectId ?? '', id ?? '', filters),
    enabled: Boolean(projectId && id),
  });
}
