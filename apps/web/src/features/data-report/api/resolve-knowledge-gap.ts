import type { KnowledgeGapResolveRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { reportKeys, reportUrl } from './report-keys';

/** Adds the topic's question to the knowledge base; the topic then leaves the gap list. */
export function useResolveKnowledgeGap(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (request: KnowledgeGapResolveRequest) =>
      post<unknown>(reportUrl(projectId, 'knowledge/gaps', '/resolve'), request),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: reportKeys.gaps(projectId) }),
  });
}
