import type { ApiKeyCreated, ApiKeyCreateRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { apiKeyKeys, apiKeysUrl } from './developer-keys';

/** The answer is the only one that carries the whole secret. The dialog shows refusals itself. */
export function createApiKey(projectId: string, body: ApiKeyCreateRequest): Promise<ApiKeyCreated> {
  return post<ApiKeyCreated>(apiKeysUrl(projectId), body, { showError: false });
}

export function useCreateApiKey(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ApiKeyCreateRequest) => createApiKey(projectId, body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiKeyKeys.list(projectId) }),
  });
}
