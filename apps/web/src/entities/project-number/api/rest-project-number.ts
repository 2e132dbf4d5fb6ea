import type { ProjectNumber } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { toast } from 'sonner';
import { put } from '@/lib/request';
import { numberUrl, projectNumberKeys } from './get-project-numbers';

/**
 * 休息 / 恢复: a resting number places no task calls (a number marked as spam recovers when left
 * alone), still answers inbound calls. The number-health report and the numbers page both offer it,
 * and both refresh: the numbers list here, the reports through `alsoInvalidate`.
 */
export function useRestProjectNumber(projectId: string, alsoInvalidate: readonly unknown[][] = []) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ number, resting }: { number: string; resting: boolean }) =>
      put<ProjectNumber>(numberUrl(projectId, number), { resting }),
    onSuccess: (_, { number, resting }) => {
      toast.success(resting ? `${number} 开始休息，呼出任务将不再使用该号码` : `${number} 已恢复使用`);
      void queryClient.invalidateQueries({ queryKey: projectNumberKeys.all(projectId) });
      for (const key of alsoInvalidate) void queryClient.invalidateQueries({ queryKey: key });
    },
  });
}
