import type { AssistantVersion } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { get } from '@/lib/request';
import { taskKeys } from './call-task-query-keys';

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
