import type { ProjectRole } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { CURRENT_USER_QUERY_KEY } from '@/lib/api/get-current-user';
import { put } from '@/lib/request';
import { projectMembersQueryOptions } from './get-project-members';

export function updateMemberRole(projectId: string, userId: string, role: ProjectRole): Promise<null> {
  return put<null>(`/api/project/${encodeURIComponent(projectId)}/members/${encodeURIComponent(userId)}`, {
    role,
  });
}

export function useUpdateMemberRole(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ userId, role }: { userId: string; role: ProjectRole }) =>
      updateMemberRole(projectId, userId, role),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: projectMembersQueryOptions(projectId).queryKey });
      // An owner stepping down changes what this console may show.
      await queryClient.invalidateQueries({ queryKey: CURRENT_USER_QUERY_KEY });
    },
  });
}
