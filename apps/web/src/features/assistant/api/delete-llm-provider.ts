import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export function deleteLlmProvider(projectId: string, id: string): Promise<unknown> {
  return del<unknown>(projectUrl(projectId, `/llm-providers/${encodeURIComponent(id)}`), { retry: 0 });
}

export function useDeleteLlmProvider(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => deleteLlmProvider(projectId, id),
    // Assistants using it fall back to the script brain, so their 模式 column changes too.
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: assistantKeys.llmProviders(projectId) }),
        queryClient.invalidateQueries({ queryKey: assistantKeys.lists(projectId) }),
      ]),
  });
}
