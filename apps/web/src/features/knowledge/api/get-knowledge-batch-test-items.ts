import type {
  KnowledgeBatchItem,
  KnowledgeBatchOutcome,
  KnowledgeBatchTest,
  Paged,
} from '@callpilot/contracts';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { batchTestsUrl } from './get-knowledge-batch-tests';
import { knowledgeKeys } from './knowledge-query-keys';

export type KnowledgeBatchItemListParams = {
  page: number;
  pageSize: number;
  outcome?: KnowledgeBatchOutcome;
};

export function getKnowledgeBatchTestItems(
  projectId: string,
  knowledgeBaseId: string,
  testId: string,
  params: KnowledgeBatchItemListParams,
): Promise<Paged<KnowledgeBatchItem>> {
  return get<Paged<KnowledgeBatchItem>>(
    `${batchTestsUrl(projectId, knowledgeBaseId)}/${encodeURIComponent(testId)}/items`,
    { params, showLoading: false },
  );
}

/** A run's questions; asked again as it progresses, then once more when it has finished. */
export function useKnowledgeBatchTestItems(
  projectId: string,
  knowledgeBaseId: string,
  test: Pick<KnowledgeBatchTest, 'id' | 'status' | 'progress'>,
  params: KnowledgeBatchItemListParams,
) {
  return useQuery({
    queryKey: [
      ...knowledgeKeys.batchTests(projectId, knowledgeBaseId),
      test.id,
      'items',
      params,
      // A finished run's items never change again; a running one's change with its progress.
      test.status,
      test.progress,
    ],
    queryFn: () => getKnowledgeBatchTestItems(projectId, knowledgeBaseId, test.id, params),
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
  });
}
