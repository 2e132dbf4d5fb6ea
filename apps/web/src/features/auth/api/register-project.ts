import type { ProjectRegisterRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { CURRENT_USER_QUERY_KEY } from '@/lib/api/get-current-user';
import { put } from '@/lib/request';

export function registerProject(body: ProjectRegisterRequest): Promise<unknown> {
  return put<unknown>('/api/project/register', body);
}

export function useRegisterProject({ onSuccess }: { onSuccess?: () => void } = {}) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: registerProject,
    onSuccess: async () => {
      // The console reads the current project from the user; it must see the new one at once.
      await queryClient.invalidateQueries({ queryKey: CURRENT_USER_QUERY_KEY });
      onSuccess?.();
    },
  });
}
