import type { AssistantDetail } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export function copyAssistant(projectId: string, id: string): Promise<AssistantDetail> {
  return post<AssistantDetail>(projectUrl(projectId, `/assistants/${encodeURIComponent(id)}/copy`));
}

export function useCopyAssistant(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => copyAssistant(projectId, id),
    onSuccess: async (copy) => {
      queryClient.setQueryData(assistantKeys.detail(projectId, copy.id), copy);
      await queryClient.invalidateQueries({ queryKey: assistantKeys.lists(projectId) });
    },
  });
}
