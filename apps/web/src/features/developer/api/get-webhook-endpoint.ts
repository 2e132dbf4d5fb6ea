import type { WebhookEndpoint } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { webhookKeys, webhookUrl } from './developer-keys';

export function getWebhookEndpoint(projectId: string, endpointId: string): Promise<WebhookEndpoint> {
  return get<WebhookEndpoint>(webhookUrl(projectId, endpointId));
}

export function useWebhookEndpoint(projectId: string | undefined, endpointId: string) {
  return useQuery({
    queryKey: webhookKeys.endpoint(projectId ?? '', endpointId),
    queryFn: () => getWebhookEndpoint(projectId ?? '', endpointId),
    enabled: Boolean(projectId),
  });
}
