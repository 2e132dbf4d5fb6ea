import type { AssistantDetail, AssistantWriteRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { put } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export function updateAssistant(
  projectId: string,
  id: string,
  body: AssistantWriteRequest,
): Promise<AssistantDetail> {
  // Not retried: a PUT is idempotent, but a validation failure toasted twice helps nobody.
  return put<AssistantDetail>(projectUrl(projectId, `/assistants/${encodeURIComponent(id)}`), body, {
    retry: 0,
  });
}

export function useUpdateAssistant(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: string; body: AssistantWriteRequest }) =>
      updateAssistant(projectId, id, body),
    onSuccess: async (updated) => {
      queryClient.setQueryData(assistantKeys.detail(projectId, updated.id), updated);
      await queryClient.invalidateQueries({ queryKey: assistantKeys.lists(projectId) });
    },
  });
}
