import type { AssistantSummary, Paged } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { callKeys, projectUrl } from './call-record-query-keys';

export type AssistantOption = { id: string; name: string };

/** The project's assistants for the 小助手 filter (the list API's largest page). */
export async function getAssistantOptions(projectId: string): Promise<AssistantOption[]> {
  const page = await get<Paged<AssistantSummary>>(projectUrl(projectId, '/assistants'), {
    params: { page: 1, pageSize: 100 },
    showLoading: false,
  });
  return (page?.items ?? []).map(({ id, name }) => ({ id, name }));
}

export const assistantOptionsQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: callKeys.assistantOptions(projectId),
    queryFn: () => getAssistantOptions(projectId),
    staleTime: 60_000,
  });

export function useAssistantOptions(projectId: string | undefined) {
  return useQuery({ ...assistantOptionsQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
