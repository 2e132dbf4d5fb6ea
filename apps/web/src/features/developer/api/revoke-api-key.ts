import type { ApiKey } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { apiKeyKeys, apiKeyUrl } from './developer-keys';

/** Every server process refuses the key from now on; it stays listed for the record. */
export function revokeApiKey(projectId: string, keyId: string): Promise<ApiKey> {
  return post<ApiKey>(apiKeyUrl(projectId, keyId, '/revoke'));
}

export function useRevokeApiKey(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (keyId: string) => revokeApiKey(projectId, keyId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiKeyKeys.list(projectId) }),
  });
}
