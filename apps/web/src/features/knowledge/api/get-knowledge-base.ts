import type { KnowledgeBase } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { knowledgeBasesUrl, knowledgeKeys } from './knowledge-query-keys';

export function getKnowledgeBase(projectId: string, knowledgeBaseId: string): Promise<KnowledgeBase> {
  // The page says "not found" itself, so a 404 need not also toast.
  return get<KnowledgeBase>(knowledgeBasesUrl(projectId, knowledgeBaseId), { showError: false });
}

export const knowledgeBaseQueryOptions = (projectId: string, knowledgeBaseId: string) =>
  queryOptions({
    queryKey: [...knowledgeKeys.base(projectId, knowledgeBaseId), 'detail'],
    queryFn: () => getKnowledgeBase(projectId, knowledgeBaseId),
  });

export function useKnowledgeBase(projectId: string | undefined, knowledgeBaseId: string) {
  return useQuery({
    ...knowledgeBaseQueryOptions(projectId ?? '', knowledgeBaseId),
    enabled: Boolean(projectId),
  });
}
