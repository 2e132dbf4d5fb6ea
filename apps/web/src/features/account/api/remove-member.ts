import { useMutation, useQueryClient } from '@tanstack/react-query';
import { CURRENT_USER_QUERY_KEY } from '@/lib/api/get-current-user';
import { del } from '@/lib/request';
import { projectMembersQueryOptions } from './get-project-members';

export function removeMember(projectId: string, userId: string): Promise<null> {
  return del<null>(`/api/project/${encodeURIComponent(projectId)}/members/${encodeURIComponent(userId)}`);
}

/** 退出项目: the caller's own membership. */
export function leaveProject(projectId: string): Promise<null> {
  return del<null>(`/api/project/${encodeURIComponent(projectId)}/membership`);
}

export function useRemoveMember(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (userId: string) => removeMember(projectId, userId),
    onSuccess: () =>
      queryClient.invalidateQueries({ queryKey: projectMembersQueryOptions(projectId).queryKey }),
  });
}

export function useLeaveProject(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => leaveProject(projectId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: CURRENT_USER_QUERY_KEY }),
  });
}
