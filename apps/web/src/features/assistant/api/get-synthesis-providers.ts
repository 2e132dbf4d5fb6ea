import type { Paged, SynthesisProvider } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

// A project has a handful of profiles; one page of 100 is all of them.
export async function getSynthesisProviders(projectId: string): Promise<SynthesisProvider[]> {
  const page = await get<Paged<SynthesisProvider>>(projectUrl(projectId, '/synthesis-providers'), {
    params: { pageSize: 100 },
  });
  return page?.items ?? [];
}

export const synthesisProvidersQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: assistantKeys.synthesisProviders(projectId),
    queryFn: () => getSynthesisProviders(projectId),
  });

export function useSynthesisProviders(projectId: string | undefined) {
  return useQuery({ ...synthesisProvidersQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
