import type { VoiceOption } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { get } from '@/lib/request';

/**
 * The voices a flow's prompts may be spoken in (流程设置). Same key as the assistant editor's
 * voice list, so both share one cached copy.
 */
export function useVoiceOptions(projectId: string | undefined) {
  return useQuery({
    queryKey: ['projects', projectId ?? '', 'voices'],
    queryFn: () => get<VoiceOption[]>(projectUrl(projectId ?? '', '/voices'), { showLoading: false }),
    staleTime: Number.POSITIVE_INFINITY,
    enabled: Boolean(projectId),
  });
}
