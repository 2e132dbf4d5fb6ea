import type { VoiceOption } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export function getVoices(projectId: string): Promise<VoiceOption[]> {
  return get<VoiceOption[]>(projectUrl(projectId, '/voices'));
}

export const voicesQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: assistantKeys.voices(projectId),
    queryFn: () => getVoices(projectId),
    staleTime: Number.POSITIVE_INFINITY,
  });

export function useVoices(projectId: string | undefined) {
  return useQuery({ ...voicesQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
