import type { InvitationAccepted, InvitationPreview } from '@callpilot/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { CURRENT_USER_QUERY_KEY } from '@/lib/api/get-current-user';
import { get, post } from '@/lib/request';

/** Public: the token is the credential; the page explains a bad link itself. */
export function getInvitationPreview(token: string): Promise<InvitationPreview> {
  return get<InvitationPreview>(`/api/invitations/${encodeURIComponent(token)}`, {
    showError: false,
    withToken: false,
  });
}

export function useInvitationPreview(token: string) {
  return useQuery({
    queryKey: ['invitations', token],
    queryFn: () => getInvitationPreview(token),
    retry: false,
  });
}

export function acceptInvitation(token: string): Promise<InvitationAccepted> {
  return post<InvitationAccepted>(`/api/invitations/${encodeURIComponent(token)}/accept`, undefined, {
    showError: false,
  });
}

export function useAcceptInvitation(token: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => acceptInvitation(token),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: CURRENT_USER_QUERY_KEY }),
  });
}
