import type { KnowledgeTerm, Paged } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { knowledgeTermKeys, knowledgeTermsUrl } from './knowledge-terms-keys';

export type KnowledgeTermListParams = { page: number; pageSize: number; keyword?: string };

export function getKnowledgeTerms(
  projectId: string,
  params: KnowledgeTermListParams,
): Promise<Paged<KnowledgeTerm>> {
  return get<Paged<KnowledgeTerm>>(knowledgeTermsUrl(projectId), {
    params: { page: params.page, pageSize: params.pageSize, keyword: params.keyword || undefined },
  });
}

export const knowledgeTermsQueryOptions = (projectId: string, params: KnowledgeTermListParams) =>
  queryOptions({
    queryKey: [...knowledgeTermKeys.lists(projectId), params],
    queryFn: () => getKnowledgeTerms(projectId, params),
  });

export function useKnowledgeTerms(projectId: string | undefined, params: KnowledgeTermListParams) {
  return useQuery({
    ...knowledgeTermsQueryOptions(projectId ?? '', params),
    enabled: Boolean(projectId),
    // Keeps the current page on screen while the next one loads, instead of flashing empty.
    placeholderData: keepPreviousData,
  });
}
