import type { AssistantSummary, Paged } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { get } from '@/lib/request';

// The project's assistants to pick from (the 小助手 filters, the task form, a number's inbound
// binding): one query, so the pickers of every section agree and share the cache.

export const assistantOptionKeys = {
  all: (projectId: string) => ['projects', projectId, 'assistants', 'options'] as const,
};

/** The list API's largest page: a project has far fewer assistants than that. */
export async function getAssistantOptions(projectId: string): Promise<AssistantSummary[]> {
  const page = await get<Paged<AssistantSummary>>(projectUrl(projectId, '/assistants'), {
    params: { page: 1, pageSize: 100 },
    showLoading: false,
  });
  return page?.items ?? [];
}

export const assistantOptionsQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: assistantOptionKeys.all(projectId),
    queryFn: () => getAssistantOptions(projectId),
    staleTime: 60_000,
  });

export function useAssistantOptions(projectId: string | undefined) {
  return useQuery({ ...assistantOptionsQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}

/** Calls run a published version: only those can be chosen for a task or an inbound number. */
export const isPublished = (assistant: Pick<AssistantSummary, 'publishedVersion'>) =>
  assistant.publishedVersion !== null;
