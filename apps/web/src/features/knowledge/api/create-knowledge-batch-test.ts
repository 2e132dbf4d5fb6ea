import type { KnowledgeBatchTest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { postForm } from '@/lib/request';
import { batchTestsUrl } from './get-knowledge-batch-tests';
import { knowledgeKeys } from './knowledge-query-keys';

export type CreateKnowledgeBatchTest = { file: File; scoreThreshold: number };

export function createKnowledgeBatchTest(
  projectId: string,
  knowledgeBaseId: string,
  { file, scoreThreshold }: CreateKnowledgeBatchTest,
): Promise<KnowledgeBatchTest> {
  const form = new FormData();
  // Fields before the file: the server reads the parts in order.
  form.append('scoreThreshold', String(scoreThreshold));
  form.append('file', file, file.name);
  return postForm<KnowledgeBatchTest>(batchTestsUrl(projectId, knowledgeBaseId), form, {
    timeout: 5 * 60_000,
  });
}

export function useCreateKnowledgeBatchTest(projectId: string, knowledgeBaseId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: CreateKnowledgeBatchTest) =>
      createKnowledgeBatchTest(projectId, knowledgeBaseId, input),
    onSuccess: () =>
      queryClient.invalidateQueries({ queryKey: knowledgeKeys.batchTests(projectId, knowledgeBaseId) }),
  });
}
