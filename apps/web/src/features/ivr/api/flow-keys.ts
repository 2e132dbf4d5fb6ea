import type { QueryClient } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';

// One place for the call flows' URLs and query keys (通话流程), shared by the list, the editor
// and its tools, so a write invalidates exactly what it changed.

export const flowsUrl = (projectId: string, path = '') => projectUrl(projectId, `/flows${path}`);

export const flowUrl = (projectId: string, flowId: string, path = '') =>
  flowsUrl(projectId, `/${encodeURIComponent(flowId)}${path}`);

export type FlowListQuery = { page: number; pageSize: number; keyword?: string };

export const flowKeys = {
  all: (projectId: string) => ['projects', projectId, 'flows'] as const,
  list: (projectId: string, query: FlowListQuery) => [...flowKeys.all(projectId), 'list', query] as const,
  /** Every flow's id and name: subflow pickers and the numbers' binding dialog. */
  options: (projectId: string) => [...flowKeys.all(projectId), 'options'] as const,
  detail: (projectId: string, flowId: string) => [...flowKeys.all(projectId), 'detail', flowId] as const,
  versions: (projectId: string, flowId: string) => [...flowKeys.all(projectId), 'versions', flowId] as const,
  version: (projectId: string, flowId: string, version: number) =>
    [...flowKeys.all(projectId), 'versions', flowId, version] as const,
  stats: (projectId: string, flowId: string, range: { from: string; to: string }) =>
    [...flowKeys.all(projectId), 'stats', flowId, range] as const,
  audio: (projectId: string) => [...flowKeys.all(projectId), 'audio'] as const,
};

/** The list (any page, any keyword) and the pickers, after a flow appeared, went, or changed name or status. */
export function invalidateFlowLists(queryClient: QueryClient, projectId: string): Promise<unknown> {
  return Promise.all([
    queryClient.invalidateQueries({ queryKey: [...flowKeys.all(projectId), 'list'] }),
    queryClient.invalidateQueries({ queryKey: flowKeys.options(projectId) }),
  ]);
}
