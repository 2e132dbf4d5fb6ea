import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { knowledgeBasesUrl, knowledgeKeys } from './knowledge-query-keys';

export function deleteKnowledgeDocument(
  projectId: string,
  knowledgeBaseId: string,
  documentId: string,
): Promise<unknown> {
  return del<unknown>(
    `${knowledgeBasesUrl(projectId, knowledgeBaseId)}/documents/${encodeURIComponent(documentId)}`,
  );
}

export function useDeleteKnowledgeDocument(projectId: string, knowledgeBaseId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (documentId: string) => deleteKnowledgeDocument(projectId, knowledgeBaseId, documentId),
    // Its segments go with it, so counts and the segment list change too.
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: knowledgeKeys.base(projectId, knowledgeBaseId) }),
        queryClient.invalidateQueries({ queryKey: knowledgeKeys.lists(projectId) }),
      ]),
  });
}
