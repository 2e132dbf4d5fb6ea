import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { webhookKeys, webhookUrl } from './developer-keys';

/** A new secret; the old one keeps signing alongside it for `graceHours` (0: replaced at once). */
export async function rollWebhookSecret(
  projectId: string,
  endpointId: string,
  graceHours: number,
): Promise<string> {
  return (await post<{ secret: string }>(webhookUrl(projectId, endpointId, '/secret/roll'), { graceHours }))
    .secret;
}

export function useRollWebhookSecret(projectId: string, endpointId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (graceHours: number) => rollWebhookSecret(projectId, endpointId, graceHours),
    // The endpoint says until when the previous secret still signs.
    onSuccess: () => queryClient.invalidateQueries({ queryKey: webhookKeys.endpoint(projectId, endpointId) }),
  });
}
