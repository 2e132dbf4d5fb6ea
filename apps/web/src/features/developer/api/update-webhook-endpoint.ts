import type { WebhookEndpoint, WebhookEndpointUpdateRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { put } from '@/lib/request';
import { webhookKeys, webhookUrl } from './developer-keys';

/**
 * Edits the address, description or events, or switches the endpoint on and off (re-enabling
 * resumes its pending deliveries). `quiet` leaves the refusal to the caller (the edit dialog).
 */
export function updateWebhookEndpoint(
  projectId: string,
  endpointId: string,
  body: WebhookEndpointUpdateRequest,
  { quiet = false } = {},
): Promise<WebhookEndpoint> {
  return put<WebhookEndpoint>(webhookUrl(projectId, endpointId), body, quiet ? { showError: false } : {});
}

export function useUpdateWebhookEndpoint(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({
      endpointId,
      body,
      quiet,
    }: {
      endpointId: string;
      body: WebhookEndpointUpdateRequest;
      quiet?: boolean;
    }) => updateWebhookEndpoint(projectId, endpointId, body, { quiet: quiet ?? false }),
    onSuccess: (endpoint) => {
      queryClient.setQueryData(webhookKeys.endpoint(projectId, endpoint.id), endpoint);
      return queryClient.invalidateQueries({ queryKey: webhookKeys.all(projectId) });
    },
  });
}
