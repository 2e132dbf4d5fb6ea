import type { SpeechSettings } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';

export function getSpeechSettings(projectId: string): Promise<SpeechSettings> {
  return get<SpeechSettings>(projectUrl(projectId, '/speech-settings'));
}

export const speechSettingsQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: assistantKeys.speechSettings(projectId),
    queryFn: () => getSpeechSettings(projectId),
  });

export function useSpeechSettings(projectId: string | undefined) {
  return useQuery({ ...speechSettingsQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
