import type { Paged, VoiceClone } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { projectUrl } from './assistant-query-keys';

export const voiceCloneKeys = {
  list: (projectId: string) => ['projects', projectId, 'voice-clones'] as const,
  /** The synthesis profiles a clone can be made with (CosyVoice and Volcengine ones). */
  profiles: (projectId: string) => ['projects', projectId, 'synthesis-providers', 'clone-options'] as const,
};

/** How often the list is asked again while a clone is 复刻中 (the server asks the vendor at most as often). */
export const TRAINING_POLL_MS = 5_000;

// A project holds a handful of clones (the 声音克隆 limit); one page of 100 is all of them.
export async function getVoiceClones(projectId: string): Promise<VoiceClone[]> {
  const page = await get<Paged<VoiceClone>>(projectUrl(projectId, '/voice-clones'), {
    params: { pageSize: 100 },
    showLoading: false,
  });
  return page?.items ?? [];
}

export const voiceClonesQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: voiceCloneKeys.list(projectId),
    queryFn: () => getVoiceClones(projectId),
    refetchInterval: (query) =>
      query.state.data?.some((clone) => clone.status === 'training') ? TRAINING_POLL_MS : false,
  });

export function useVoiceClones(projectId: string | undefined, enabled = true) {
  return useQuery({ ...voiceClonesQueryOptions(projectId ?? ''), enabled: Boolean(projectId) && enabled });
}
