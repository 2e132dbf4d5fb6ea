import type { ApiKeyCreated } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { apiKeyKeys, apiKeyUrl } from './developer-keys';

/** A new key with the same settings; the old one keeps working for `graceHours` (0: stops now). */
export function rollApiKey(projectId: string, keyId: string, graceHours: number): Promise<ApiKeyCreated> {
  return post<ApiKeyCreated>(apiKeyUrl(projectId, keyId, '/roll'), { graceHours });
}

export function useRollApiKey(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ keyId, graceHours }: { keyId: string; graceHours: number }) =>
      rollApiKey(projectId, keyId, graceHours),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiKeyKeys.list(projectId) }),
  });
}
