import type { FlowSummary, Paged } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { type FlowListQuery, flowKeys, flowsUrl } from './flow-keys';

export function getFlows(projectId: string, query: FlowListQuery): Promise<Paged<FlowSummary>> {
  // An empty keyword is no filter: it is left out rather than sent as `keyword=`.
  const params = query.keyword ? query : { page: query.page, pageSize: query.pageSize };
  return get<Paged<FlowSummary>>(flowsUrl(projectId), { params });
}

export const flowsQueryOptions = (projectId: string, query: FlowListQuery) =>
  queryOptions({
    queryKey: flowKeys.list(projectId, query),
    queryFn: () => getFlows(projectId, query),
    // The table keeps the current page on screen while the next one loads.
    placeholderData: keepPreviousData,
  });

/** 通话流程 list: one page, optionally filtered by a keyword in the name or description. */
export function useFlows(projectId: string | undefined, query: FlowListQuery) {
  return useQuery({ ...flowsQueryOptions(projectId ?? '', query), enabled: Boolean(projectId) });
}
