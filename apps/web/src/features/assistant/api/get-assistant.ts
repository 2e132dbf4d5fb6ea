import type { AssistantDetail } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export function getAssistant(projectId: string, id: string): Promise<AssistantDetail> {
  return get<AssistantDetail>(projectUrl(projectId, `/assistants/${encodeURIComponent(id)}`));
}

export const assistantQueryOptions = (projectId: string, id: string) =>
  queryOptions({
    queryKey: assistantKeys.detail(projectId, id),
    queryFn: () => getAssistant(projectId, id),
    // The editor seeds its form from this once; a background refetch must not look like new data.
    staleTime: Number.POSITIVE_INFINITY,
    refetchOnWindowFocus: false,
  });

export function useAssistant(projectId: string | undefined, id: string | undefined) {
  return useQuery({ ...assistantQueryOptions(projectId ?? '', id ?? ''), enabled: Boolean(projectId && id) });
}
