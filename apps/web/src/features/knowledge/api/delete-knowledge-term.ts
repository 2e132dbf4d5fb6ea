import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { knowledgeTermKeys, knowledgeTermsUrl } from './knowledge-terms-keys';

export function deleteKnowledgeTerm(projectId: string, termId: string): Promise<unknown> {
  return del<unknown>(knowledgeTermsUrl(projectId, termId));
}

export function useDeleteKnowledgeTerm(projectId: string, { onSuccess }: { onSuccess?: () => void } = {}) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (termId: string) => deleteKnowledgeTerm(projectId, termId),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: knowledgeTermKeys.lists(projectId) });
      onSuccess?.();
    },
  });
}
