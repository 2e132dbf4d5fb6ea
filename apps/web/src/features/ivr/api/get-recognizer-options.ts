import type { Paged, SpeechProvider } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { get } from '@/lib/request';

/**
 * The recognition profiles a flow's 语音识别 nodes may listen with (流程设置). Same key as the
 * assistant editor's list; a project has a handful, so one page of 100 is all of them.
 */
export function useRecognizerOptions(projectId: string | undefined) {
  return useQuery({
    queryKey: ['projects', projectId ?? '', 'speech-providers'],
    queryFn: async () =>
      (
        await get<Paged<SpeechProvider>>(projectUrl(projectId ?? '', '/speech-providers'), {
          params: { pageSize: 100 },
          showLoading: false,
        })
      )?.items ?? [],
    enabled: Boolean(projectId),
  });
}
