import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { projectUrl } from './assistant-query-keys';
import { voiceCloneKeys } from './get-voice-clones';

export function deleteVoiceClone(projectId: string, id: string): Promise<unknown> {
  return del<unknown>(projectUrl(projectId, `/voice-clones/${encodeURIComponent(id)}`), { retry: 0 });
}

export function useDeleteVoiceClone(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => deleteVoiceClone(projectId, id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: voiceCloneKeys.list(projectId) }),
  });
}
