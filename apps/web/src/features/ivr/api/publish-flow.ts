import type { FlowDetail, FlowPublishRequest } from '@callpilot/contracts';
import { type QueryClient, useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { flowKeys, flowUrl, invalidateFlowLists } from './flow-keys';

/**
 * After a publish or a rollback: the detail is the server's answer, set rather than refetched so
 * the editor showing it does not flash; the list and pickers (status, version) and the versions
 * are read again.
 */
export function afterFlowRelease(queryClient: QueryClient, projectId: string, detail: FlowDetail) {
  queryClient.setQueryData(flowKeys.detail(projectId, detail.id), detail);
  return Promise.all([
    invalidateFlowLists(queryClient, projectId),
    queryClient.invalidateQueries({ queryKey: flowKeys.versions(projectId, detail.id) }),
  ]);
}

/**
 * 发布: freezes the stored draft as the next version, which answers calls from now on. The server
 * refuses (400, naming the first error) a draft that does not pass validateFlow.
 */
export function publishFlow(
  projectId: string,
  flowId: string,
  body: FlowPublishRequest,
): Promise<FlowDetail> {
  return post<FlowDetail>(flowUrl(projectId, flowId, '/publish'), body);
}

export function usePublishFlow(projectId: string, flowId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: FlowPublishRequest) => publishFlow(projectId, flowId, body),
    onSuccess: (detail) => afterFlowRelease(queryClient, projectId, detail),
  });
}
