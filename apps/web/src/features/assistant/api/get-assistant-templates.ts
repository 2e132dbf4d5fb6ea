import type { AssistantTemplate } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export function getAssistantTemplates(projectId: string): Promise<AssistantTemplate[]> {
  return get<AssistantTemplate[]>(projectUrl(projectId, '/assistant-templates'));
}

export const assistantTemplatesQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: assistantKeys.templates(projectId),
    queryFn: () => getAssistantTemplates(projectId),
    // Built into the server: they change only with a new release.
    staleTime: Number.POSITIVE_INFINITY,
  });

export function useAssistantTemplates(projectId: string | undefined) {
  return useQuery({ ...assistantTemplatesQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
