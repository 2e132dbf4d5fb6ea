import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export function deleteSynthesisProvider(projectId: string, id: string): Promise<unknown> {
  return del<unknown>(projectUrl(projectId, `/synthesis-providers/${encodeURIComponent(id)}`), { retry: 0 });
}

export function useDeleteSynthesisProvider(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => deleteSynthesisProvider(projectId, id),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: assistantKeys.synthesisProviders(projectId) }),
        queryClient.invalidateQueries({ queryKey: assistantKeys.voices(projectId) }),
      ]),
  });
}
