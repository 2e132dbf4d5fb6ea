import { useMutation, useQueryClient } from '@tanstack/react-query';
import { assistantOptionKeys } from '@/entities/assistant/api/get-assistant-options';
import { post } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export function publishAssistant(projectId: string, id: string, note: string): Promise<unknown> {
  return post<unknown>(projectUrl(projectId, `/assistants/${encodeURIComponent(id)}/publish`), { note });
}

export function usePublishAssistant(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, note }: { id: string; note: string }) => publishAssistant(projectId, id, note),
    // The version number and the 有未发布修改 flag live on the detail, the list and the history; the
    // other sections' pickers offer published assistants only.
    onSuccess: (_, { id }) =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: assistantKeys.detail(projectId, id) }),
        queryClient.invalidateQueries({ queryKey: assistantKeys.versions(projectId, id) }),
        queryClient.invalidateQueries({ queryKey: assistantKeys.lists(projectId) }),
        queryClient.invalidateQueries({ queryKey: assistantOptionKeys.all(projectId) }),
      ]),
  });
}
