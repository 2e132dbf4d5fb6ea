import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { batchTestsUrl } from './get-knowledge-batch-tests';
import { knowledgeKeys } from './knowledge-query-keys';

export function deleteKnowledgeBatchTest(projectId: string, knowledgeBaseId: string, testId: string) {
  return del<unknown>(`${batchTestsUrl(projectId, knowledgeBaseId)}/${encodeURIComponent(testId)}`);
}

export function useDeleteKnowledgeBatchTest(projectId: string, knowledgeBaseId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (testId: string) => deleteKnowledgeBatchTest(projectId, knowledgeBaseId, testId),
    onSuccess: () =>
      queryClient.invalidateQueries({ queryKey: knowledgeKeys.batchTests(projectId, knowledgeBaseId) }),
  });
}
