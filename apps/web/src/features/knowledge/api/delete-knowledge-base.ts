import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { knowledgeBasesUrl, knowledgeKeys } from './knowledge-query-keys';

export function deleteKnowledgeBase(projectId: string, knowledgeBaseId: string): Promise<unknown> {
  return del<unknown>(knowledgeBasesUrl(projectId, knowledgeBaseId));
}

export function useDeleteKnowledgeBase(projectId: string, { onSuccess }: { onSuccess?: () => void } = {}) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (knowledgeBaseId: string) => deleteKnowledgeBase(projectId, knowledgeBaseId),
    onSuccess: async (_, knowledgeBaseId) => {
      queryClient.removeQueries({ queryKey: knowledgeKeys.base(projectId, knowledgeBaseId) });
      await queryClient.invalidateQueries({ queryKey: knowledgeKeys.lists(projectId) });
      onSuccess?.();
    },
  });
}
