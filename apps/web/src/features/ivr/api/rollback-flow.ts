import type { FlowDetail } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { flowUrl } from './flow-keys';
import { afterFlowRelease } from './publish-flow';

/** 回滚: the version answers calls again and the draft becomes its graph. */
export function rollbackFlow(projectId: string, flowId: string, version: number): Promise<FlowDetail> {
  return post<FlowDetail>(flowUrl(projectId, flowId, `/versions/${version}/rollback`));
}

export function useRollbackFlow(projectId: string, flowId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (version: number) => rollbackFlow(projectId, flowId, version),
    onSuccess: (detail) => afterFlowRelease(queryClient, projectId, detail),
  });
}
