import type { WebhookEndpoint } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { webhookKeys, webhooksUrl } from './developer-keys';

/** Every endpoint of the project, each with its deliveries of the last 24 hours. */
export function getWebhookEndpoints(projectId: string): Promise<WebhookEndpoint[]> {
  return get<WebhookEndpoint[]>(webhooksUrl(projectId));
}

export const webhookEndpointsQueryOptions = (projectId: string) =>
  queryOptions({ queryKey: webhookKeys.list(projectId), queryFn: () => getWebhookEndpoints(projectId) });

export function useWebhookEndpoints(projectId: string | undefined) {
  return useQuery({ ...webhookEndpointsQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
