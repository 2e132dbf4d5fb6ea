import type { Paged, SpeechProvider } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

// A project has a handful of profiles; one page of 100 is all of them, for the drawer and the picker.
export async function getSpeechProviders(projectId: string): Promise<SpeechProvider[]> {
  const page = await get<Paged<SpeechProvider>>(projectUrl(projectId, '/speech-providers'), {
    params: { pageSize: 100 },
  });
  return page?.items ?? [];
}

export const speechProvidersQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: assistantKeys.speechProviders(projectId),
    queryFn: () => getSpeechProviders(projectId),
  });

export function useSpeechProviders(projectId: string | undefined) {
  return useQuery({ ...speechProvidersQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
