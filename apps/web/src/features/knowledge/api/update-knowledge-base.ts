import type { KnowledgeBase, KnowledgeBaseWriteRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { put } from '@/lib/request';
import { knowledgeBasesUrl, knowledgeKeys } from './knowledge-query-keys';

export function updateKnowledgeBase(
  projectId: string,
  knowledgeBaseId: string,
  body: KnowledgeBaseWriteRequest,
): Promise<KnowledgeBase> {
  return put<KnowledgeBase>(knowledgeBasesUrl(projectId, knowledgeBaseId), body);
}

export function useUpdateKnowledgeBase(projectId: string, { onSuccess }: { onSuccess?: () => void } = {}) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ knowledgeBaseId, body }: { knowledgeBaseId: string; body: KnowledgeBaseWriteRequest }) =>
      updateKnowledgeBase(projectId, knowledgeBaseId, body),
    onSuccess: async (_, { knowledgeBaseId }) => {
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: knowledgeKeys.lists(projectId) }),
        queryClient.invalidateQueries({ queryKey: knowledgeKeys.base(projectId, knowledgeBaseId) }),
      ]);
      onSuccess?.();
    },
  });
}
