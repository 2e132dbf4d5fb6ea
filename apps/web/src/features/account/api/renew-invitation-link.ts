import type { InvitationLink } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { invitationsQueryKey } from './get-invitations';

/** Only the token's hash is stored, so copying a link means issuing a new one. */
export function renewInvitationLink(projectId: string, invitationId: string): Promise<InvitationLink> {
  return post<InvitationLink>(
    `/api/project/${encodeURIComponent(projectId)}/invitations/${encodeURIComponent(invitationId)}/link`,
  );
}

export function useRenewInvitationLink(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (invitationId: string) => renewInvitationLink(projectId, invitationId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: invitationsQueryKey(projectId) }),
  });
}
