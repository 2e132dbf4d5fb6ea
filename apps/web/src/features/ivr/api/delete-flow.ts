import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { flowKeys, flowUrl, invalidateFlowLists } from './flow-keys';

/**
 * The server refuses (409) while a number is bound to the flow or another flow calls it as a
 * subflow, naming them; the request client shows that reason.
 */
export function deleteFlow(projectId: string, flowId: string): Promise<unknown> {
  return del<unknown>(flowUrl(projectId, flowId), { retry: 0 });
}

export function useDeleteFlow(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (flowId: string) => deleteFlow(projectId, flowId),
    onSuccess: (_, flowId) => {
      queryClient.removeQueries({ queryKey: flowKeys.detail(projectId, flowId) });
      return invalidateFlowLists(queryClient, projectId);
    },
  });
}
