import type { KnowledgeSegment, Paged } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { knowledgeBasesUrl, knowledgeKeys } from './knowledge-query-keys';

export type KnowledgeSegmentListParams = {
  page: number;
  pageSize: number;
  documentId?: string;
  keyword?: string;
};

export function getKnowledgeSegments(
  projectId: string,
  knowledgeBaseId: string,
  params: KnowledgeSegmentListParams,
): Promise<Paged<KnowledgeSegment>> {
  return get<Paged<KnowledgeSegment>>(`${knowledgeBasesUrl(projectId, knowledgeBaseId)}/segments`, {
    params: {
      page: params.page,
      pageSize: params.pageSize,
      documentId: params.documentId || undefined,
      keyword: params.keyword || undefined,
    },
  });
}

export const knowledgeSegmentsQueryOptions = (
  projectId: string,
  knowledgeBaseId: string,
  params: KnowledgeSegmentListParams,
) =>
  queryOptions({
    queryKey: [...knowledgeKeys.segments(projectId, knowledgeBaseId), params],
    queryFn: () => getKnowledgeSegments(projectId, knowledgeBaseId, params),
  });

export function useKnowledgeSegments(
  projectId: string | undefined,
  knowledgeBaseId: string,
  params: KnowledgeSegmentListParams,
) {
  return useQuery({
    ...knowledgeSegmentsQueryOptions(projectId ?? '', knowledgeBaseId, params),
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
  });
}
