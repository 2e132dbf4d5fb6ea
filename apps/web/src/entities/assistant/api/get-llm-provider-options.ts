import type { LlmProvider, Paged } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { get } from '@/lib/request';

// The project's model profiles to pick from outside the assistant editor (the knowledge hit
// test's 大模型改写与重排). Nested under the key the assistant feature invalidates after saving or
// deleting a profile, so a picker never offers one that is gone.

export const llmProviderOptionKeys = {
  all: (projectId: string) => ['projects', projectId, 'llm-providers', 'options'] as const,
};

/** The list API's largest page: a project has a handful of profiles. */
export async function getLlmProviderOptions(projectId: string): Promise<LlmProvider[]> {
  const page = await get<Paged<LlmProvider>>(projectUrl(projectId, '/llm-providers'), {
    params: { page: 1, pageSize: 100 },
    showLoading: false,
  });
  return page?.items ?? [];
}

export const llmProviderOptionsQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: llmProviderOptionKeys.all(projectId),
    queryFn: () => getLlmProviderOptions(projectId),
    staleTime: 60_000,
  });

export function useLlmProviderOptions(projectId: string | undefined) {
  return useQuery({ ...llmProviderOptionsQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
