import type { VoiceClone } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { postForm } from '@/lib/request';
import { projectUrl } from './assistant-query-keys';
import { voiceCloneKeys } from './get-voice-clones';

export type CreateVoiceClone = {
  name: string;
  providerId: string;
  /** Volcengine only: the S_ slot bought in its console. */
  speakerId?: string;
  /** The checked sample, as a 16-bit mono WAV. */
  sample: Blob;
  /** 0-100 of the upload. */
  onProgress?: (percent: number) => void;
};

export function createVoiceClone(projectId: string, input: CreateVoiceClone): Promise<VoiceClone> {
  const form = new FormData();
  form.append('name', input.name);
  form.append('providerId', input.providerId);
  if (input.speakerId) form.append('speakerId', input.speakerId);
  form.append('sample', input.sample, 'sample.wav');
  return postForm<VoiceClone>(projectUrl(projectId, '/voice-clones'), form, {
    // The dialog shows the server's reason next to the sample, where the user fixes it.
    showError: false,
    // The vendor takes its time to fetch and enrol the sample.
    timeout: 2 * 60_000,
    onUploadProgress: (event) => {
      if (event.total) input.onProgress?.(Math.min(99, Math.round((event.loaded / event.total) * 100)));
    },
  });
}

export function useCreateVoiceClone(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: CreateVoiceClone) => createVoiceClone(projectId, input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: voiceCloneKeys.list(projectId) }),
  });
}
