import type { FlowCreateRequest, FlowDetail } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { flowKeys, flowsUrl, invalidateFlowLists } from './flow-keys';

/** A new draft holding only its 开始 node. */
export function createFlow(projectId: string, body: FlowCreateRequest): Promise<FlowDetail> {
  return post<FlowDetail>(flowsUrl(projectId), body);
}

export function useCreateFlow(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: FlowCreateRequest) => createFlow(projectId, body),
    onSuccess: (created) => {
      // The editor opens next: it finds the flow in the cache instead of asking again.
      queryClient.setQueryData(flowKeys.detail(projectId, created.id), created);
      return invalidateFlowLists(queryClient, projectId);
    },
  });
}
