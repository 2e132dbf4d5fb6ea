import type { ProjectMember } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';

export function getProjectMembers(projectId: string): Promise<ProjectMember[]> {
  return get<ProjectMember[]>(`/api/project/${encodeURIComponent(projectId)}/members`);
}

export const projectMembersQueryOptions = (projectId: string) =>
  queryOptions({ queryKey: ['projects', projectId, 'members'], queryFn: () => getProjectMembers(projectId) });

export function useProjectMembers(projectId: string | undefined) {
  return useQuery({ ...projectMembersQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
