import type { WebhookDeliveryDetail } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { webhookDeliveryUrl, webhookKeys } from './developer-keys';
import { DELIVERY_POLL_MS } from './get-webhook-deliveries';

/** One delivery with its payload and every attempt (request headers, answer, error). */
export function getWebhookDelivery(
  projectId: string,
  endpointId: string,
  deliveryId: string,
): Promise<WebhookDeliveryDetail> {
  return get<WebhookDeliveryDetail>(webhookDeliveryUrl(projectId, endpointId, deliveryId), {
    showLoading: false,
  });
}

export function useWebhookDelivery(projectId: string, endpointId: string, deliveryId: string) {
  return useQuery({
    queryKey: webhookKeys.delivery(projectId, endpointId, deliveryId),
    queryFn: () => getWebhookDelivery(projectId, endpointId, deliveryId),
    refetchInterval: (q) => (q.state.data?.status === 'pending' ? DELIVERY_POLL_MS : false),
  });
}
