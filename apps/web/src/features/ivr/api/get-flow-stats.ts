import type { FlowNodeStats } from '@callpilot/contracts';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { flowKeys, flowUrl } from './flow-keys';

/** A range of ISO instants, `to` exclusive. */
export type FlowStatsRange = { from: string; to: string };

/** Per node: calls that reached it and callers who hung up there, over the published versions' calls. */
export function getFlowStats(
  projectId: string,
  flowId: string,
  range: FlowStatsRange,
): Promise<FlowNodeStats> {
  return get<FlowNodeStats>(flowUrl(projectId, flowId, '/stats'), { params: range, showLoading: false });
}

export function useFlowStats(
  projectId: string,
  flowId: string,
  range: FlowStatsRange,
  { enabled = true } = {},
) {
  return useQuery({
    queryKey: flowKeys.stats(projectId, flowId, range),
    queryFn: () => getFlowStats(projectId, flowId, range),
    enabled,
    // The canvas keeps the old figures while another range loads, rather than blinking to none.
    placeholderData: keepPreviousData,
  });
}
