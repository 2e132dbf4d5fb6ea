import type { LlmProvider, LlmProviderWriteRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post, put } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

/** Creates a profile, or updates one when `id` is given; an empty API key keeps the stored one. */
export function saveLlmProvider(
  projectId: string,
  body: LlmProviderWriteRequest,
  id?: string,
): Promise<LlmProvider> {
  const payload: LlmProviderWriteRequest = { ...body };
  if (!payload.apiKey) delete payload.apiKey;
  if (!payload.clearApiKey) delete payload.clearApiKey;
  return id
    ? put<LlmProvider>(projectUrl(projectId, `/llm-providers/${encodeURIComponent(id)}`), payload, {
        retry: 0,
      })
    : post<LlmProvider>(projectUrl(projectId, '/llm-providers'), payload);
}

export function useSaveLlmProvider(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ body, id }: { body: LlmProviderWriteRequest; id?: string }) =>
      saveLlmProvider(projectId, body, id),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: assistantKeys.llmProviders(projectId) }),
  });
}
