import { useMutation } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { webhookUrl } from './developer-keys';

/**
 * The endpoint's signing secret (owners and admins only). Asked for on each 显示 / 复制 rather than
 * cached, so the secret stays in memory no longer than it is on screen.
 */
export async function getWebhookSecret(projectId: string, endpointId: string): Promise<string> {
  return (await get<{ secret: string }>(webhookUrl(projectId, endpointId, '/secret'))).secret;
}

export function useRevealWebhookSecret(projectId: string, endpointId: string) {
  return useMutation({ mutationFn: () => getWebhookSecret(projectId, endpointId) });
}
