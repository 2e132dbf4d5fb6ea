import type { ProjectBalance } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { post } from '@/lib/request';

// A read, although the spec's verb for it is POST.
export function getProjectBalance(projectId: string): Promise<ProjectBalance> {
  return post<ProjectBalance>(`/api/project/${encodeURIComponent(projectId)}/balance`);
}

export const projectBalanceQueryOptions = (projectId: string) =>
  queryOptions({ queryKey: ['projects', projectId, 'balance'], queryFn: () => getProjectBalance(projectId) });

export function useProjectBalance(projectId: string | undefined) {
  return useQuery({ ...projectBalanceQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
