import { useMutation, useQueryClient } from '@tanstack/react-query';
import { clearToken } from '@/lib/auth-token';
import { del } from '@/lib/request';
import { USER_SESSIONS_QUERY_KEY } from './get-user-sessions';

export function endUserSession(id: string): Promise<{ current: boolean }> {
  return del<{ current: boolean }>(`/api/user/sessions/${encodeURIComponent(id)}`);
}

/** Ends a session; ending this device's own is a logout, so the local token goes too. */
export function useEndUserSession({ onLoggedOut }: { onLoggedOut: () => void }) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: endUserSession,
    onSuccess: async ({ current }) => {
      if (current) {
        clearToken();
        queryClient.clear();
        onLoggedOut();
        return;
      }
      await queryClient.invalidateQueries({ queryKey: USER_SESSIONS_QUERY_KEY });
    },
  });
}
