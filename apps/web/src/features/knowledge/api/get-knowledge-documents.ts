import type { KnowledgeDocument, Paged } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { knowledgeBasesUrl, knowledgeKeys } from './knowledge-query-keys';

export type KnowledgeDocumentListParams = { page: number; pageSize: number };

/** How often the documents table asks again while something is still being indexed. */
export const DOCUMENT_POLL_INTERVAL_MS = 1500;

export function isDocumentPending(document: Pick<KnowledgeDocument, 'status'>): boolean {
  return document.status === 'queued' || document.status === 'parsing';
}

export function getKnowledgeDocuments(
  projectId: string,
  knowledgeBaseId: string,
  params: KnowledgeDocumentListParams,
): Promise<Paged<KnowledgeDocument>> {
  return get<Paged<KnowledgeDocument>>(`${knowledgeBasesUrl(projectId, knowledgeBaseId)}/documents`, {
    params,
    // Polled every 1.5 s while indexing: the top progress bar would flicker without end.
    showLoading: false,
  });
}

export const knowledgeDocumentsQueryOptions = (
  projectId: string,
  knowledgeBaseId: string,
  params: KnowledgeDocumentListParams,
) =>
  queryOptions({
    queryKey: [...knowledgeKeys.documents(projectId, knowledgeBaseId), params],
    queryFn: () => getKnowledgeDocuments(projectId, knowledgeBaseId, params),
  });

export function useKnowledgeDocuments(
  projectId: string | undefined,
  knowledgeBaseId: string,
  params: KnowledgeDocumentListParams,
) {
  return useQuery({
    ...knowledgeDocumentsQueryOptions(projectId ?? '', knowledgeBaseId, params),
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
    // Only while something is queued or parsing: a settled list has nothing new to show.
    refetchInterval: (query) =>
      query.state.data?.items.some(isDocumentPending) ? DOCUMENT_POLL_INTERVAL_MS : false,
  });
}
