import type { KnowledgeBase, KnowledgeBaseWriteRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { knowledgeBasesUrl, knowledgeKeys } from './knowledge-query-keys';

export function createKnowledgeBase(
  projectId: string,
  body: KnowledgeBaseWriteRequest,
): Promise<KnowledgeBase> {
  return post<KnowledgeBase>(knowledgeBasesUrl(projectId), body);
}

export function useCreateKnowledgeBase(
  projectId: string,
  { onSuccess }: { onSuccess?: (base: KnowledgeBase) => void } = {},
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: KnowledgeBaseWriteRequest) => createKnowledgeBase(projectId, body),
    onSuccess: async (base) => {
      await queryClient.invalidateQueries({ queryKey: knowledgeKeys.lists(projectId) });
      onSuccess?.(base);
    },
  });
}
