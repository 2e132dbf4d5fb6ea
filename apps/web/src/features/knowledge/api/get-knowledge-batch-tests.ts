import type { KnowledgeBatchTest, Paged } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { knowledgeBasesUrl, knowledgeKeys } from './knowledge-query-keys';

export type KnowledgeBatchTestListParams = { page: number; pageSize: number };

/** How often the runs are asked again while one is still running. */
export const BATCH_TEST_POLL_INTERVAL_MS = 1000;

export const batchTestsUrl = (projectId: string, knowledgeBaseId: string) =>
  `${knowledgeBasesUrl(projectId, knowledgeBaseId)}/batch-tests`;

export function getKnowledgeBatchTests(
  projectId: string,
  knowledgeBaseId: string,
  params: KnowledgeBatchTestListParams,
): Promise<Paged<KnowledgeBatchTest>> {
  return get<Paged<KnowledgeBatchTest>>(batchTestsUrl(projectId, knowledgeBaseId), {
    params,
    // Polled every second while a run is going: the top progress bar would flicker without end.
    showLoading: false,
  });
}

export const knowledgeBatchTestsQueryOptions = (
  projectId: string,
  knowledgeBaseId: string,
  params: KnowledgeBatchTestListParams,
) =>
  queryOptions({
    queryKey: [...knowledgeKeys.batchTests(projectId, knowledgeBaseId), 'list', params],
    queryFn: () => getKnowledgeBatchTests(projectId, knowledgeBaseId, params),
  });

export function useKnowledgeBatchTests(
  projectId: string,
  knowledgeBaseId: string,
  params: KnowledgeBatchTestListParams,
) {
  return useQuery({
    ...knowledgeBatchTestsQueryOptions(projectId, knowledgeBaseId, params),
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
    // Only while a run is going: finished runs do not change.
    refetchInterval: (query) =>
      query.state.data?.items.some((test) => test.status === 'running') ? BATCH_TEST_POLL_INTERVAL_MS : false,
  });
}
