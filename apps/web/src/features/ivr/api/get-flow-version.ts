import type { FlowGraph } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { flowKeys, flowUrl } from './flow-keys';

/** One published version's graph; versions are frozen, so it never goes stale. */
export function getFlowVersion(projectId: string, flowId: string, version: number): Promise<FlowGraph> {
  return get<FlowGraph>(flowUrl(projectId, flowId, `/versions/${version}`), { showLoading: false });
}

export function useFlowVersion(projectId: string, flowId: string, version: number | null) {
  return useQuery({
    queryKey: flowKeys.version(projectId, flowId, version ?? 0),
    queryFn: () => getFlowVersion(projectId, flowId, version ?? 0),
    enabled: version !== null,
    staleTime: Number.POSITIVE_INFINITY,
  });
}
