import type { FlowDetail, FlowVersionSummary } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { flowKeys, flowUrl } from './flow-keys';

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
 * The stored draft, to compare a version with. Shares the detail's query key, so the editor's
 * already loaded detail answers it without a request.
 */
export function useFlowStoredDraft(projectId: string, flowId: string, { enabled = true } = {}) {
  return useQuery({
    queryKey: flowKeys.detail(projectId, flowId),
    queryFn: () => get<FlowDetail>(flowUrl(projectId, flowId), { showLoading: false }),
    select: (detail) => detail.draft,
    enabled,
  });
}
