import type { ProjectInvitation } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';

export function getInvitations(projectId: string): Promise<ProjectInvitation[]> {
  return get<ProjectInvitation[]>(`/api/project/${encodeURIComponent(projectId)}/invitations`);
}

export const invitationsQueryKey = (projectId: string) => ['projects', projectId, 'invitations'] as const;

export const invitationsQueryOptions = (projectId: string) =>
  queryOptions({ queryKey: invitationsQueryKey(projectId), queryFn: () => getInvitations(projectId) });

export function useInvitations(projectId: string, enabled = true) {
  return useQuery({ ...invitationsQueryOptions(projectId), enabled });
}
