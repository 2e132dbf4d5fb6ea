import type { Paged, WebhookDelivery } from '@callpilot/contracts';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { type DeliveryQuery, webhookKeys, webhookUrl } from './developer-keys';

/** While a delivery on the page is still being tried, the log is read again this often. */
export const DELIVERY_POLL_MS = 3000;

export function getWebhookDeliveries(
  projectId: string,
  endpointId: string,
  query: DeliveryQuery,
): Promise<Paged<WebhookDelivery>> {
  return get<Paged<WebhookDelivery>>(webhookUrl(projectId, endpointId, '/deliveries'), {
    params: query,
    // Polled while deliveries are pending: the top progress bar would flicker without end.
    showLoading: false,
  });
}

export function useWebhookDeliveries(
  projectId: string | undefined,
  endpointId: string,
  query: DeliveryQuery,
) {
  return useQuery({
    queryKey: webhookKeys.deliveryList(projectId ?? '', endpointId, query),
    queryFn: () => getWebhookDeliveries(projectId ?? '', endpointId, query),
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
    // A test event or a retry lands within seconds; a settled page has nothing new to show.
    refetchInterval: (q) =>
      q.state.data?.items.some((delivery) => delivery.status === 'pending') ? DELIVERY_POLL_MS : false,
  });
}
