import type { FlowVersionSummary } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { flowKeys, flowUrl } from './flow-keys';
import { flowQueryOptions } from './get-flow';

/** Every published version, newest first, the live one flagged. */
export function getFlowVersions(projectId: string, flowId: string): Promise<FlowVersionSummary[]> {
  return get<FlowVersionSummary[]>(flowUrl(projectId, flowId, '/versions'), { showLoading: false });
}

export function useFlowVersions(projectId: string, flowId: string, { enabled = true } = {}) {
  return useQuery({
    queryKey: flowKeys.versions(projectId, flowId),
    queryFn: () => getFlowVersions(projectId, flowId),
    enabled,
  });
}

/**
 * The stored draft, to compare a version with: the editor's detail query (already loaded, so no
 * request), narrowed to the draft.
 */
export function useFlowStoredDraft(projectId: string, flowId: string) {
  return useQuery({ ...flowQueryOptions(projectId, flowId), select: (detail) => detail.draft });
}
