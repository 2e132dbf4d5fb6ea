import { useMutation, useQueryClient } from '@tanstack/react-query';
import { clearToken } from '@/lib/auth-token';
import { get } from '@/lib/request';

export function logout(): Promise<null> {
  return get<null>('/auth/logout', { fallbackMessage: '登出失败' });
}

/**
 * Signs out on this device whatever the server says: the request client has already toasted a
 * failure, and keeping the user in after they asked to leave would be worse than a stale server
 * session that expires on its own.
 */
export function useLogout({ onSettled }: { onSettled?: () => void } = {}) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: logout,
    onSettled: () => {
      clearToken();
      queryClient.clear();
      onSettled?.();
    },
  });
}
