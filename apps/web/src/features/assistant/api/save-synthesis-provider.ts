import type { SynthesisProvider, SynthesisProviderWriteRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post, put } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

/** Creates a profile, or updates one when `id` is given; an empty key keeps the stored one. */
export function saveSynthesisProvider(
  projectId: string,
  body: SynthesisProviderWriteRequest,
  id?: string,
): Promise<SynthesisProvider> {
  const payload: SynthesisProviderWriteRequest = { ...body };
  if (!payload.apiKey) delete payload.apiKey;
  if (!payload.clearApiKey) delete payload.clearApiKey;
  return id
    ? put<SynthesisProvider>(
        projectUrl(projectId, `/synthesis-providers/${encodeURIComponent(id)}`),
        payload,
        { retry: 0 },
      )
    : post<SynthesisProvider>(projectUrl(projectId, '/synthesis-providers'), payload);
}

export function useSaveSynthesisProvider(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ body, id }: { body: SynthesisProviderWriteRequest; id?: string }) =>
      saveSynthesisProvider(projectId, body, id),
    // A profile's voices are in the picker under its name.
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: assistantKeys.synthesisProviders(projectId) }),
        queryClient.invalidateQueries({ queryKey: assistantKeys.voices(projectId) }),
      ]),
  });
}
