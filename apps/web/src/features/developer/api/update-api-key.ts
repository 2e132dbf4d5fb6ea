import type { ApiKey, ApiKeyUpdateRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { put } from '@/lib/request';
import { apiKeyKeys, apiKeyUrl } from './developer-keys';

/** Name, scopes, allowlist and limit change in place; the dialog shows refusals itself. */
export function updateApiKey(projectId: string, keyId: string, body: ApiKeyUpdateRequest): Promise<ApiKey> {
  return put<ApiKey>(apiKeyUrl(projectId, keyId), body, { showError: false });
}

export function useUpdateApiKey(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ keyId, body }: { keyId: string; body: ApiKeyUpdateRequest }) =>
      updateApiKey(projectId, keyId, body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiKeyKeys.list(projectId) }),
  });
}
