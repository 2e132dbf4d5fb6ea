import type { AssistantDetail } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { assistantKeys, projectUrl } from './assistant-query-keys';
import { getAssistant } from './get-assistant';

/** Restores a version as the draft and publishes it as a new version; resolves with the assistant. */
export async function rollbackAssistantVersion(
  projectId: string,
  id: string,
  version: number,
): Promise<AssistantDetail> {
  await post<unknown>(
    projectUrl(projectId, `/assistants/${encodeURIComponent(id)}/versions/${version}/rollback`),
  );
  return getAssistant(projectId, id);
}

export function useRollbackAssistantVersion(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, version }: { id: string; version: number }) =>
      rollbackAssistantVersion(projectId, id, version),
    onSuccess: async (detail) => {
      queryClient.setQueryData(assistantKeys.detail(projectId, detail.id), detail);
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: assistantKeys.versions(projectId, detail.id) }),
        queryClient.invalidateQueries({ queryKey: assistantKeys.lists(projectId) }),
      ]);
    },
  });
}
