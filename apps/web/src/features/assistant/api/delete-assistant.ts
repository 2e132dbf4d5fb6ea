import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export function deleteAssistant(projectId: string, id: string): Promise<unknown> {
  return del<unknown>(projectUrl(projectId, `/assistants/${encodeURIComponent(id)}`), { retry: 0 });
}

export function useDeleteAssistant(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => deleteAssistant(projectId, id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: assistantKeys.lists(projectId) }),
  });
}
