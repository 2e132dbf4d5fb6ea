import type { WebhookDelivery, WebhookEventType } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { webhookKeys, webhookUrl } from './developer-keys';

/** Queues the catalogue's sample of `eventType` through the normal outbox, marked as a test. */
export function sendWebhookTest(
  projectId: string,
  endpointId: string,
  eventType: WebhookEventType,
): Promise<WebhookDelivery> {
  return post<WebhookDelivery>(webhookUrl(projectId, endpointId, '/test'), { eventType });
}

export function useSendWebhookTest(projectId: string, endpointId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (eventType: WebhookEventType) => sendWebhookTest(projectId, endpointId, eventType),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: webhookKeys.endpoint(projectId, endpointId) }),
  });
}
