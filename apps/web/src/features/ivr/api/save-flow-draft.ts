import type { FlowDetail, FlowDraftRequest, FlowDraftSaved } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { put } from '@/lib/request';
import { flowKeys, flowUrl } from './flow-keys';

export function saveFlowDraft(
  projectId: string,
  flowId: string,
  body: FlowDraftRequest,
): Promise<FlowDraftSaved> {
  // Not retried: a PUT is idempotent, but a refusal toasted three times helps nobody.
  return put<FlowDraftSaved>(flowUrl(projectId, flowId, '/draft'), body, { retry: 0 });
}

/**
 * Saves the draft (always accepted; the answer carries its validation issues). The detail cache is
 * updated in place rather than refetched, so the editor's canvas is not re-seeded under the owner.
 */
export function useSaveFlowDraft(projectId: string | undefined, flowId: string | undefined) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: FlowDraftRequest) => saveFlowDraft(projectId ?? '', flowId ?? '', body),
    onSuccess: (saved, body) => {
      queryClient.setQueryData<FlowDetail>(flowKeys.detail(projectId ?? '', flowId ?? ''), (current) =>
        current
          ? {
              ...current,
              ...(body.name === undefined ? {} : { name: body.name }),
              ...(body.description === undefined ? {} : { description: body.description }),
              draft: body.graph,
              issues: saved.issues,
              updatedAt: saved.updatedAt,
              // A published flow whose draft was saved again has changes the callers do not hear yet.
              status: current.publishedVersion === null ? 'draft' : 'changed',
            }
          : current,
      );
      // The list shows the status, the name and 更新时间; pickers show the name.
      return Promise.all([
        queryClient.invalidateQueries({ queryKey: [...flowKeys.all(projectId ?? ''), 'list'] }),
        queryClient.invalidateQueries({ queryKey: flowKeys.options(projectId ?? '') }),
      ]);
    },
  });
}
