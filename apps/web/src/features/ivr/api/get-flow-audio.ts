import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { flowKeys, flowsUrl } from './flow-keys';

/** An uploaded prompt a 放音 node may play instead of synthesised text. */
export type FlowAudioFile = { id: string; name: string; durationMs: number; createdAt: string };

export async function getFlowAudio(projectId: string): Promise<FlowAudioFile[]> {
  return (await get<FlowAudioFile[]>(flowsUrl(projectId, '/audio'), { showLoading: false })) ?? [];
}

export const flowAudioQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: flowKeys.audio(projectId),
    queryFn: () => getFlowAudio(projectId),
    staleTime: 60_000,
  });

/** The project's uploaded prompts (shared by every flow). */
export function useFlowAudio(projectId: string | undefined, { enabled = true } = {}) {
  return useQuery({ ...flowAudioQueryOptions(projectId ?? ''), enabled: enabled && Boolean(projectId) });
}
