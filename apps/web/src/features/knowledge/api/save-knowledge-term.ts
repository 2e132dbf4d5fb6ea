import type { KnowledgeTerm, KnowledgeTermWriteRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post, put } from '@/lib/request';
import { knowledgeTermKeys, knowledgeTermsUrl } from './knowledge-terms-keys';

export function createKnowledgeTerm(
  projectId: string,
  body: KnowledgeTermWriteRequest,
): Promise<KnowledgeTerm> {
  return post<KnowledgeTerm>(knowledgeTermsUrl(projectId), body);
}

export function updateKnowledgeTerm(
  projectId: string,
  termId: string,
  body: KnowledgeTermWriteRequest,
): Promise<KnowledgeTerm> {
  return put<KnowledgeTerm>(knowledgeTermsUrl(projectId, termId), body);
}

/** Creates an entry, or edits the one whose id is given; the list is refreshed either way. */
export function useSaveKnowledgeTerm(projectId: string, { onSuccess }: { onSuccess?: () => void } = {}) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ termId, body }: { termId?: string; body: KnowledgeTermWriteRequest }) =>
      termId ? updateKnowledgeTerm(projectId, termId, body) : createKnowledgeTerm(projectId, body),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: knowledgeTermKeys.lists(projectId) });
      onSuccess?.();
    },
  });
}
