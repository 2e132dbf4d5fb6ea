import type { InvitationLink, InviteMemberRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { invitationsQueryKey } from './get-invitations';

export function createInvitation(projectId: string, body: InviteMemberRequest): Promise<InvitationLink> {
  return post<InvitationLink>(`/api/project/${encodeURIComponent(projectId)}/invitations`, body);
}

export function useCreateInvitation(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: InviteMemberRequest) => createInvitation(projectId, body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: invitationsQueryKey(projectId) }),
  });
}
