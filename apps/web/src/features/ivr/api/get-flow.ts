import type { FlowDetail } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { flowKeys, flowUrl } from './flow-keys';

export function getFlow(projectId: string, flowId: string): Promise<FlowDetail> {
  return get<FlowDetail>(flowUrl(projectId, flowId));
}

export const flowQueryOptions = (projectId: string, flowId: string) =>
  queryOptions({
    queryKey: flowKeys.detail(projectId, flowId),
    queryFn: () => getFlow(projectId, flowId),
    // The editor seeds its canvas from this once; a background refetch must not look like new data
    // and overwrite what the owner is drawing.
    staleTime: Number.POSITIVE_INFINITY,
    refetchOnWindowFocus: false,
  });

/** One flow with its draft, its live graph and the draft's validation issues. */
export function useFlow(projectId: string | undefined, flowId: string | undefined) {
  return useQuery({
    ...flowQueryOptions(projectId ?? '', flowId ?? ''),
    enabled: Boolean(projectId && flowId),
  });
}
