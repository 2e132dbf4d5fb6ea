import type { LlmProvider, Paged } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

// A project has a handful of profiles; one page of 100 is all of them, for the drawer and the picker.
export async function getLlmProviders(projectId: string): Promise<LlmProvider[]> {
  const page = await get<Paged<LlmProvider>>(projectUrl(projectId, '/llm-providers'), {
    params: { pageSize: 100 },
  });
  return page?.items ?? [];
}

export const llmProvidersQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: assistantKeys.llmProviders(projectId),
    queryFn: () => getLlmProviders(projectId),
  });

export function useLlmProviders(projectId: string | undefined) {
  return useQuery({ ...llmProvidersQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
