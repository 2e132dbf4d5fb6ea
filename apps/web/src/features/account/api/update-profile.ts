import type { ProfileUpdate } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { CURRENT_USER_QUERY_KEY } from '@/lib/api/get-current-user';
import { put } from '@/lib/request';

export function updateProfile(body: ProfileUpdate): Promise<unknown> {
  return put<unknown>('/api/profile', body);
}

export function useUpdateProfile({ onSuccess }: { onSuccess?: () => void } = {}) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateProfile,
    onSuccess: async () => {
      // The name appears wherever the current user is shown; refresh it there too.
      await queryClient.invalidateQueries({ queryKey: CURRENT_USER_QUERY_KEY });
      onSuccess?.();
    },
  });
}
