import type { AssistantSummary, AssistantVersion, Paged } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { projectUrl, taskKeys } from './call-task-query-keys';

/** The project's assistants (the list API's largest page), for the filter and the task form. */
export async function getTaskAssistants(projectId: string): Promise<AssistantSummary[]> {
  const page = await get<Paged<AssistantSummary>>(projectUrl(projectId, '/assistants'), {
    params: { page: 1, pageSize: 100 },
    showLoading: false,
  });
  return page?.items ?? [];
}

export const taskAssistantsQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: taskKeys.assistants(projectId),
    queryFn: () => getTaskAssistants(projectId),
    staleTime: 60_000,
  });

export function useTaskAssistants(projectId: string | undefined) {
  return useQuery({ ...taskAssistantsQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}

/** Published versions, newest first: a task runs a frozen version, and its variables come from it. */
export async function getPublishedVersions(
  projectId: string,
  assistantId: string,
): Promise<AssistantVersion[]> {
  const versions = await get<AssistantVersion[]>(
    projectUrl(projectId, `/assistants/${encodeURIComponent(assistantId)}/versions`),
    { showLoading: false },
  );
  return [...(versions ?? [])].sort((a, b) => b.version - a.version);
}

export const publishedVersionsQueryOptions = (projectId: string, assistantId: string) =>
  queryOptions({
    queryKey: taskKeys.assistantVersions(projectId, assistantId),
    queryFn: () => getPublishedVersions(projectId, assistantId),
    staleTime: 60_000,
  });

export function usePublishedVersions(projectId: string | undefined, assistantId: string | null | undefined) {
  return useQuery({
    ...publishedVersionsQueryOptions(projectId ?? '', assistantId ?? ''),
    enabled: Boolean(projectId && assistantId),
  });
}
