import type { KnowledgeBase, Paged } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

// The editor links bases by id; it reads the list itself rather than reaching into the knowledge feature.
export function getKnowledgeBaseOptions(projectId: string): Promise<Paged<KnowledgeBase>> {
  return get<Paged<KnowledgeBase>>(projectUrl(projectId, '/knowledge-bases'), { params: { pageSize: 100 } });
}

export const knowledgeBaseOptionsQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: assistantKeys.knowledgeBases(projectId),
    queryFn: () => getKnowledgeBaseOptions(projectId),
  });

export function useKnowledgeBaseOptions(projectId: string | undefined) {
  return useQuery({ ...knowledgeBaseOptionsQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
