import { queryOptions, useQuery } from '@tanstack/react-query';
import { callKeys, callUrl } from '@/entities/call/api/call-query-keys';
import { get } from '@/lib/request';

export type RecordingUrl = { url: string; expiresAt: string };

export function getRecordingUrl(projectId: string, id: string): Promise<RecordingUrl> {
  return get<RecordingUrl>(callUrl(projectId, id, '/recording-url'), { showLoading: false });
}

export const recordingUrlQueryOptions = (projectId: string, id: string) =>
  queryOptions({
    queryKey: callKeys.recording(projectId, id),
    queryFn: () => getRecordingUrl(projectId, id),
    // The signed URL lives 10 minutes; the player keeps what it loaded, a reload asks again.
    staleTime: 5 * 60_000,
    refetchOnWindowFocus: false,
  });

export function useRecordingUrl(projectId: string | undefined, id: string | undefined, enabled: boolean) {
  return useQuery({
    ...recordingUrlQueryOptions(projectId ?? '', id ?? ''),
    enabled: enabled && Boolean(projectId && id),
  });
}
