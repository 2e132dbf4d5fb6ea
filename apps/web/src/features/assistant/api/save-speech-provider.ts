import type { SpeechProvider, SpeechProviderWriteRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post, put } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

/** Creates a profile, or updates one when `id` is given; an empty API key keeps the stored one. */
export function saveSpeechProvider(
  projectId: string,
  body: SpeechProviderWriteRequest,
  id?: string,
): Promise<SpeechProvider> {
  const payload: SpeechProviderWriteRequest = { ...body };
  if (!payload.apiKey) delete payload.apiKey;
  if (!payload.clearApiKey) delete payload.clearApiKey;
  return id
    ? put<SpeechProvider>(projectUrl(projectId, `/speech-providers/${encodeURIComponent(id)}`), payload, {
        retry: 0,
      })
    : post<SpeechProvider>(projectUrl(projectId, '/speech-providers'), payload);
}

export function useSaveSpeechProvider(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ body, id }: { body: SpeechProviderWriteRequest; id?: string }) =>
      saveSpeechProvider(projectId, body, id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: assistantKeys.speechProviders(projectId) }),
  });
}
