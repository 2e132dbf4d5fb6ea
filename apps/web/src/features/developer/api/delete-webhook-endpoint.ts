import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { webhookKeys, webhookUrl } from './developer-keys';

/** Deletes the endpoint with its delivery log; nothing more is sent to it. */
export function deleteWebhookEndpoint(projectId: string, endpointId: string): Promise<unknown> {
  return del<unknown>(webhookUrl(projectId, endpointId));
}

export function useDeleteWebhookEndpoint(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (endpointId: string) => deleteWebhookEndpoint(projectId, endpointId),
    onSuccess: (_, endpointId) => {
      // Its detail must not be read again on the way back to the list.
      queryClient.removeQueries({ queryKey: webhookKeys.endpoint(projectId, endpointId) });
      return queryClient.invalidateQueries({ queryKey: webhookKeys.list(projectId) });
    },
  });
}
