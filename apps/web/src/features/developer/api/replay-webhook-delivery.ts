import type { WebhookDeliveryDetail } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { webhookDeliveryUrl, webhookKeys } from './developer-keys';

/**
 * Sends the delivery again now, re-signed with a fresh timestamp and the same webhook-id. The
 * server answers after the attempt, so the detail it returns already holds the attempt's result.
 */
export function replayWebhookDelivery(
  projectId: string,
  endpointId: string,
  deliveryId: string,
): Promise<WebhookDeliveryDetail> {
  return post<WebhookDeliveryDetail>(webhookDeliveryUrl(projectId, endpointId, deliveryId, '/replay'));
}

export function useReplayWebhookDelivery(projectId: string, endpointId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (deliveryId: string) => replayWebhookDelivery(projectId, endpointId, deliveryId),
    onSuccess: (detail) => {
      queryClient.setQueryData(webhookKeys.delivery(projectId, endpointId, detail.id), detail);
      return Promise.all([
        queryClient.invalidateQueries({
          queryKey: [...webhookKeys.deliveries(projectId, endpointId), 'list'],
        }),
        queryClient.invalidateQueries({ queryKey: webhookKeys.list(projectId) }),
      ]);
    },
  });
}
