import type { CallDetail } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callKeys, callUrl } from '@/entities/call/api/call-query-keys';
import { put } from '@/lib/request';

export function updateCallTags(projectId: string, id: string, tags: string[]): Promise<CallDetail> {
  return put<CallDetail>(callUrl(projectId, id, '/tags'), { tags });
}

export function useUpdateCallTags(projectId: string, id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (tags: string[]) => updateCallTags(projectId, id, tags),
    onSuccess: (saved) => {
      queryClient.setQueryData(callKeys.detail(projectId, id), saved);
      void queryClient.invalidateQueries({ queryKey: callKeys.lists(projectId) });
      void queryClient.invalidateQueries({ queryKey: callKeys.tags(projectId) });
    },
  });
}
