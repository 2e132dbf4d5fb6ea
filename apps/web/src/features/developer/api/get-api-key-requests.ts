import type { ApiKeyRequestLogEntry, Paged } from '@callpilot/contracts';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { apiKeyKeys, apiKeyUrl, type RequestLogQuery } from './developer-keys';

/** One page of the key's request log (the server keeps 30 days). */
export function getApiKeyRequests(
  projectId: string,
  keyId: string,
  query: RequestLogQuery,
): Promise<Paged<ApiKeyRequestLogEntry>> {
  return get<Paged<ApiKeyRequestLogEntry>>(apiKeyUrl(projectId, keyId, '/requests'), { params: query });
}

export function useApiKeyRequests(projectId: string, keyId: string, query: RequestLogQuery) {
  return useQuery({
    queryKey: apiKeyKeys.requests(projectId, keyId, query),
    queryFn: () => getApiKeyRequests(projectId, keyId, query),
    // The drawer keeps the current page on screen while the next one loads.
    placeholderData: keepPreviousData,
  });
}
