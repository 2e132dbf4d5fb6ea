import type { AssistantVersion } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export async function getAssistantVersions(projectId: string, id: string): Promise<AssistantVersion[]> {
  const versions = await get<AssistantVersion[]>(
    projectUrl(projectId, `/assistants/${encodeURIComponent(id)}/versions`),
  );
  // Newest first whatever order the server keeps.
  return [...(versions ?? [])].sort((a, b) => b.version - a.version);
}

export const assistantVersionsQueryOptions = (projectId: string, id: string) =>
  queryOptions({
    queryKey: assistantKeys.versions(projectId, id),
    queryFn: () => getAssistantVersions(projectId, id),
  });

export function useAssistantVersions(projectId: string | undefined, id: string | undefined, enabled = true) {
  return useQuery({
    ...assistantVersionsQueryOptions(projectId ?? '', id ?? ''),
    enabled: enabled && Boolean(projectId && id),
  });
}
