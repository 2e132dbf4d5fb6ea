import type { AssistantStatus, AssistantSummary, AssistantUse, Paged } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export type AssistantListParams = {
  page: number;
  pageSize: number;
  keyword?: string;
  use?: AssistantUse;
  status?: AssistantStatus;
};

export function getAssistants(
  projectId: string,
  params: AssistantListParams,
): Promise<Paged<AssistantSummary>> {
  const query = Object.fromEntries(
    Object.entries(params).filter(([, value]) => value !== undefined && value !== ''),
  );
  return get<Paged<AssistantSummary>>(projectUrl(projectId, '/assistants'), { params: query });
}

export const assistantsQueryOptions = (projectId: string, params: AssistantListParams) =>
  queryOptions({
    queryKey: [...assistantKeys.lists(projectId), params],
    queryFn: () => getAssistants(projectId, params),
    // The table keeps the current page on screen while the next one loads.
    placeholderData: keepPreviousData,
  });

export function useAssistants(projectId: string | undefined, params: AssistantListParams) {
  return useQuery({ ...assistantsQueryOptions(projectId ?? '', params), enabled: Boolean(projectId) });
}
