import type { KnowledgeSegment } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { put } from '@/lib/request';
import { knowledgeBasesUrl, knowledgeKeys } from './knowledge-query-keys';

export type KnowledgeSegmentUpdate = {
  content?: string;
  question?: string;
  answer?: string;
  /** A pair's similar questions (相似问), replacing the current ones. */
  similarQuestions?: string[];
  enabled?: boolean;
};

export function updateKnowledgeSegment(
  projectId: string,
  knowledgeBaseId: string,
  segmentId: string,
  body: KnowledgeSegmentUpdate,
): Promise<KnowledgeSegment> {
  return put<KnowledgeSegment>(
    `${knowledgeBasesUrl(projectId, knowledgeBaseId)}/segments/${encodeURIComponent(segmentId)}`,
    body,
  );
}

export function useUpdateKnowledgeSegment(
  projectId: string,
  knowledgeBaseId: string,
  { onSuccess }: { onSuccess?: () => void } = {},
) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ segmentId, body }: { segmentId: string; body: KnowledgeSegmentUpdate }) =>
      updateKnowledgeSegment(projectId, knowledgeBaseId, segmentId, body),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: knowledgeKeys.segments(projectId, knowledgeBaseId) });
      onSuccess?.();
    },
  });
}
