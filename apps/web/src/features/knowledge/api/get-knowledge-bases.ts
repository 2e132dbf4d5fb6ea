import type { KnowledgeBase, Paged } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { knowledgeBasesUrl, knowledgeKeys } from './knowledge-query-keys';

export const BASE_POLL_INTERVAL_MS = 3000;

export type KnowledgeBaseListParams = { page: number; pageSize: number; keyword?: string };

export function getKnowledgeBases(
  projectId: string,
  params: KnowledgeBaseListParams,
): Promise<Paged<KnowledgeBase>> {
  return get<Paged<KnowledgeBase>>(knowledgeBasesUrl(projectId), {
    params: { page: params.page, pageSize: params.pageSize, keyword: params.keyword || undefined },
    // Re-asked every few seconds while a base is indexing; the table shows its own spinner.
    showLoading: false,
  });
}

export const knowledgeBasesQueryOptions = (projectId: string, params: KnowledgeBaseListParams) =>
  queryOptions({
    queryKey: [...knowledgeKeys.lists(projectId), params],
    queryFn: () => getKnowledgeBases(projectId, params),
  });

export function useKnowledgeBases(projectId: string | undefined, params: KnowledgeBaseListParams) {
  return useQuery({
    ...knowledgeBasesQueryOptions(projectId ?? '', params),
    enabled: Boolean(projectId),
    // Keeps the current page on screen while the next one loads, instead of flashing empty.
    placeholderData: keepPreviousData,
    // Until indexing ends, so the 处理中 tag and the counts settle without a reload.
    refetchInterval: (query) =>
      query.state.data?.items.some((base) => base.pendingCount > 0) ? BASE_POLL_INTERVAL_MS : false,
  });
}
