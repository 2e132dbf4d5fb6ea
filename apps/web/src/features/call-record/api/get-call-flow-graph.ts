import type { CallFlowPath, FlowGraph } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { callKeys } from '@/entities/call/api/call-query-keys';
import { projectUrl } from '@/lib/api/project-url';
import { get } from '@/lib/request';

/** The frozen graph of the flow version that answered a call: it names the exits the path took. */
export function getCallFlowGraph(projectId: string, flowId: string, version: number): Promise<FlowGraph> {
  return get<FlowGraph>(
    projectUrl(projectId, `/flows/${encodeURIComponent(flowId)}/versions/${encodeURIComponent(version)}`),
    // Only labels depend on it: a deleted flow leaves the path readable with plain exit names.
    { showError: false, showLoading: false, retry: 0 },
  );
}

/**
 * The graph of a call's published flow version; none for a 模拟来电 of the draft (it may have
 * changed since) or a flow deleted since the call.
 */
export function useCallFlowGraph(projectId: string, flow: CallFlowPath | null) {
  const flowId = flow?.flowId ?? null;
  const version = flow?.flowVersion ?? null;
  return useQuery({
    queryKey: [...callKeys.all(projectId), 'flow-graph', flowId, version],
    queryFn: () => getCallFlowGraph(projectId, flowId ?? '', version ?? 0),
    enabled: Boolean(projectId && flowId && version !== null),
    // A published version never changes.
    staleTime: Number.POSITIVE_INFINITY,
  });
}
