import { useMutation, useQueryClient } from '@tanstack/react-query';
import { postForm } from '@/lib/request';
import { flowKeys, flowsUrl } from './flow-keys';
import type { FlowAudioFile } from './get-flow-audio';

/** Uploads a WAV prompt; the server converts it for the phone line and refuses what it cannot play. */
export function uploadFlowAudio(projectId: string, file: File): Promise<FlowAudioFile> {
  const form = new FormData();
  form.append('name', file.name.replace(/\.wav$/i, '').slice(0, 40) || '录音');
  form.append('file', file, file.name);
  return postForm<FlowAudioFile>(flowsUrl(projectId, '/audio'), form, { timeout: 60_000 });
}

export function useUploadFlowAudio(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (file: File) => uploadFlowAudio(projectId, file),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: flowKeys.audio(projectId) }),
  });
}
