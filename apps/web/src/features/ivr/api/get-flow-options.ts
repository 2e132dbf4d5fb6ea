import type { FlowSummary } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { flowKeys, flowsUrl } from './flow-keys';

/** A flow as a picker offers it; only a published one can answer calls or run as a subflow. */
export type FlowOption = Pick<FlowSummary, 'id' | 'name' | 'publishedVersion'>;

export async function getFlowOptions(projectId: string): Promise<FlowOption[]> {
  return (await get<FlowOption[]>(flowsUrl(projectId, '/options'), { showLoading: false })) ?? [];
}

export const flowOptionsQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: flowKeys.options(projectId),
    queryFn: () => getFlowOptions(projectId),
    staleTime: 60_000,
  });

/** Every flow of the project (pickers: a number's inbound binding, a subflow node). */
export function useFlowOptions(projectId: string | undefined, { enabled = true } = {}) {
  return useQuery({ ...flowOptionsQueryOptions(projectId ?? ''), enabled: enabled && Boolean(projectId) });
}

export const isPublishedFlow = (flow: Pick<FlowOption, 'publishedVersion'>) => flow.publishedVersion !== null;
