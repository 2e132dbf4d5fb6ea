import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { invitationsQueryKey } from './get-invitations';

export function revokeInvitation(projectId: string, invitationId: string): Promise<null> {
  return del<null>(
    `/api/project/${encodeURIComponent(projectId)}/invitations/${encodeURIComponent(invitationId)}`,
  );
}

export function useRevokeInvitation(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (invitationId: string) => revokeInvitation(projectId, invitationId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: invitationsQueryKey(projectId) }),
  });
}
