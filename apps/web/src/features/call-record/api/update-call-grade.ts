import type { CallDetail, IntentGrade } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { callKeys, callUrl } from '@/entities/call/api/call-query-keys';
import { put } from '@/lib/request';

/** null clears the human grade, so the machine's counts again. */
export function updateCallGrade(
  projectId: string,
  id: string,
  grade: IntentGrade | null,
): Promise<CallDetail> {
  return put<CallDetail>(callUrl(projectId, id, '/grade'), { grade });
}

export function useUpdateCallGrade(projectId: string, id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (grade: IntentGrade | null) => updateCallGrade(projectId, id, grade),
    onSuccess: (saved) => {
      queryClient.setQueryData(callKeys.detail(projectId, id), saved);
      void queryClient.invalidateQueries({ queryKey: callKeys.lists(projectId) });
    },
  });
}
