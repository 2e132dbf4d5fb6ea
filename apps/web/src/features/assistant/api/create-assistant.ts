import type { AssistantDetail, AssistantWriteRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export type AssistantCreateBody = AssistantWriteRequest & { templateKey?: string };

export function createAssistant(projectId: string, body: AssistantCreateBody): Promise<AssistantDetail> {
  return post<AssistantDetail>(projectUrl(projectId, '/assistants'), body);
}

export function useCreateAssistant(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: AssistantCreateBody) => createAssistant(projectId, body),
    onSuccess: async (created) => {
      queryClient.setQueryData(assistantKeys.detail(projectId, created.id), created);
      await queryClient.invalidateQueries({ queryKey: assistantKeys.lists(projectId) });
    },
  });
}
