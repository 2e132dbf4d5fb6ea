import type { ApiKey } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { apiKeyKeys, apiKeysUrl } from './developer-keys';

/** Every key of the project (a project has a handful), newest first and revoked last. */
export function getApiKeys(projectId: string): Promise<ApiKey[]> {
  return get<ApiKey[]>(apiKeysUrl(projectId));
}

export const apiKeysQueryOptions = (projectId: string) =>
  queryOptions({ queryKey: apiKeyKeys.list(projectId), queryFn: () => getApiKeys(projectId) });

export function useApiKeys(projectId: string | undefined) {
  return useQuery({ ...apiKeysQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
