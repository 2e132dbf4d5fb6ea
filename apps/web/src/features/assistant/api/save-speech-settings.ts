import type { SpeechSettings } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { put } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export function saveSpeechSettings(projectId: string, settings: SpeechSettings): Promise<SpeechSettings> {
  return put<SpeechSettings>(projectUrl(projectId, '/speech-settings'), settings, { retry: 0 });
}

export function useSaveSpeechSettings(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (settings: SpeechSettings) => saveSpeechSettings(projectId, settings),
    onSuccess: (saved) => queryClient.setQueryData(assistantKeys.speechSettings(projectId), saved),
  });
}
