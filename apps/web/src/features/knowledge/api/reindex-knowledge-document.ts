import type { KnowledgeDocument } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { knowledgeBasesUrl, knowledgeKeys } from './knowledge-query-keys';

export function reindexKnowledgeDocument(
  projectId: string,
  knowledgeBaseId: string,
  documentId: string,
): Promise<KnowledgeDocument> {
  return post<KnowledgeDocument>(
    `${knowledgeBasesUrl(projectId, knowledgeBaseId)}/documents/${encodeURIComponent(documentId)}/reindex`,
  );
}

export function useReindexKnowledgeDocument(projectId: string, knowledgeBaseId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (documentId: string) => reindexKnowledgeDocument(projectId, knowledgeBaseId, documentId),
    // The document is queued again, which restarts the table's polling.
    onSuccess: () =>
      queryClient.invalidateQueries({ queryKey: knowledgeKeys.base(projectId, knowledgeBaseId) }),
  });
}
