import type { WebhookEndpoint, WebhookEndpointCreateRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { webhookKeys, webhooksUrl } from './developer-keys';

/** The dialog shows a refusal (an address on a private network, say) next to the form itself. */
export function createWebhookEndpoint(
  projectId: string,
  body: WebhookEndpointCreateRequest,
): Promise<WebhookEndpoint> {
  return post<WebhookEndpoint>(webhooksUrl(projectId), body, { showError: false });
}

export function useCreateWebhookEndpoint(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: WebhookEndpointCreateRequest) => createWebhookEndpoint(projectId, body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: webhookKeys.list(projectId) }),
  });
}
