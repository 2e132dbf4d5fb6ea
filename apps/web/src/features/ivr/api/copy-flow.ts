import type { FlowDetail } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { flowKeys, flowUrl, invalidateFlowLists } from './flow-keys';

/** A new draft with the flow's draft graph, named 「… 副本」 by the server. */
export function copyFlow(projectId: string, flowId: string): Promise<FlowDetail> {
  return post<FlowDetail>(flowUrl(projectId, flowId, '/copy'));
}

export function useCopyFlow(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (flowId: string) => copyFlow(projectId, flowId),
    onSuccess: (copy) => {
      queryClient.setQueryData(flowKeys.detail(projectId, copy.id), copy);
      return invalidateFlowLists(queryClient, projectId);
    },
  });
}
