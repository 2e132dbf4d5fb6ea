import { projectUrl } from '@/lib/api/project-url';

// One place for the section's URLs and query keys, so a write invalidates exactly what it changed.

export const apiKeysUrl = (projectId: string, path = '') => projectUrl(projectId, `/api-keys${path}`);

export const apiKeyUrl = (projectId: string, keyId: string, path = '') =>
  apiKeysUrl(projectId, `/${encodeURIComponent(keyId)}${path}`);

export const webhooksUrl = (projectId: string, path = '') => projectUrl(projectId, `/webhooks${path}`);

export const webhookUrl = (projectId: string, endpointId: string, path = '') =>
  webhooksUrl(projectId, `/${encodeURIComponent(endpointId)}${path}`);

export const webhookDeliveryUrl = (projectId: string, endpointId: string, deliveryId: string, path = '') =>
  webhookUrl(projectId, endpointId, `/deliveries/${encodeURIComponent(deliveryId)}${path}`);

export type RequestLogQuery = { page: number; pageSize: number; status: 'all' | 'success' | 'error' };

export type DeliveryQuery = {
  page: number;
  pageSize: number;
  status: 'all' | 'pending' | 'succeeded' | 'failed';
  /** Absent: every event type. */
  eventType?: string;
};

export const apiKeyKeys = {
  all: (projectId: string) => ['projects', projectId, 'api-keys'] as const,
  list: (projectId: string) => [...apiKeyKeys.all(projectId), 'list'] as const,
  requests: (projectId: string, keyId: string, query: RequestLogQuery) =>
    [...apiKeyKeys.all(projectId), 'requests', keyId, query] as const,
};

// Nested under the endpoint, so one invalidation of an endpoint refreshes its log as well.
export const webhookKeys = {
  all: (projectId: string) => ['projects', projectId, 'webhooks'] as const,
  list: (projectId: string) => [...webhookKeys.all(projectId), 'list'] as const,
  endpoint: (projectId: string, endpointId: string) =>
    [...webhookKeys.all(projectId), 'endpoint', endpointId] as const,
  deliveries: (projectId: string, endpointId: string) =>
    [...webhookKeys.endpoint(projectId, endpointId), 'deliveries'] as const,
  deliveryList: (projectId: string, endpointId: string, query: DeliveryQuery) =>
    [...webhookKeys.deliveries(projectId, endpointId), 'list', query] as const,
  delivery: (projectId: string, endpointId: string, deliveryId: string) =>
    [...webhookKeys.deliveries(projectId, endpointId), 'detail', deliveryId] as const,
};
