import type { KnowledgeBatchComparison } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { batchTestsUrl } from './get-knowledge-batch-tests';
import { knowledgeKeys } from './knowledge-query-keys';

export function compareKnowledgeBatchTests(
  projectId: string,
  knowledgeBaseId: string,
  testId: string,
  withId: string,
): Promise<KnowledgeBatchComparison> {
  return get<KnowledgeBatchComparison>(
    `${batchTestsUrl(projectId, knowledgeBaseId)}/${encodeURIComponent(testId)}/compare`,
    { params: { with: withId } },
  );
}

/** The run against an earlier one; nothing is asked until an earlier run is chosen. */
export function useCompareKnowledgeBatchTests(
  projectId: string,
  knowledgeBaseId: string,
  testId: string,
  withId: string | undefined,
) {
  return useQuery({
    queryKey: [...knowledgeKeys.batchTests(projectId, knowledgeBaseId), testId, 'compare', withId],
    queryFn: () => compareKnowledgeBatchTests(projectId, knowledgeBaseId, testId, withId ?? ''),
    enabled: Boolean(projectId && withId),
  });
}
