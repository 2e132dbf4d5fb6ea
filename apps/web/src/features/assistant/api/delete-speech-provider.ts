import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export function deleteSpeechProvider(projectId: string, id: string): Promise<unknown> {
  return del<unknown>(projectUrl(projectId, `/speech-providers/${encodeURIComponent(id)}`), { retry: 0 });
}

export function useDeleteSpeechProvider(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => deleteSpeechProvider(projectId, id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: assistantKeys.speechProviders(projectId) }),
  });
}
