import type { KnowledgeTermImportResult } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { postForm } from '@/lib/request';
import { knowledgeTermKeys, knowledgeTermsUrl } from './knowledge-terms-keys';

export function importKnowledgeTerms(projectId: string, file: File): Promise<KnowledgeTermImportResult> {
  const form = new FormData();
  form.append('file', file, file.name);
  return postForm<KnowledgeTermImportResult>(`${knowledgeTermsUrl(projectId)}/import`, form);
}

export function useImportKnowledgeTerms(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (file: File) => importKnowledgeTerms(projectId, file),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: knowledgeTermKeys.lists(projectId) }),
  });
}
