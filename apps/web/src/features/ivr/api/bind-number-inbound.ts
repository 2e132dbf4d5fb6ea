import type { ProjectNumber, ProjectNumberInboundRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { numberUrl, projectNumberKeys } from '@/entities/project-number/api/get-project-numbers';
import { put } from '@/lib/request';

/**
 * Binds the number's inbound calls to an assistant or a call flow (its published version answers
 * them), or unbinds it with both null. The server refuses an unpublished assistant or flow (400)
 * and a number another project has bound (409), with a message the request client shows.
 */
export function bindNumberInbound(
  projectId: string,
  number: string,
  body: ProjectNumberInboundRequest,
): Promise<ProjectNumber> {
  return put<ProjectNumber>(numberUrl(projectId, number, '/inbound'), body);
}

export function useBindNumberInbound(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({
      number,
      assistantId,
      flowId = null,
    }: {
      number: string;
      assistantId: string | null;
      flowId?: string | null;
    }) => bindNumberInbound(projectId, number, { assistantId, flowId }),
    onSuccess: (saved) => {
      queryClient.setQueryData<ProjectNumber[]>(projectNumberKeys.all(projectId), (current) =>
        current?.map((candidate) => (candidate.number === saved.number ? saved : candidate)),
      );
      return queryClient.invalidateQueries({ queryKey: projectNumberKeys.all(projectId) });
    },
  });
}
