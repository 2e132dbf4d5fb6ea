import type { HitTestResult } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { knowledgeBasesUrl } from './knowledge-query-keys';

export type HitTestInput = {
  query: string;
  topK: number;
  /** The confidence an answer needs, as an assistant's 相似度阈值. */
  scoreThreshold: number;
  /** A model profile that rewrites the question and re-ranks the hits; omitted for none. */
  llmProviderId?: string;
};

export function hitTestKnowledgeBase(
  projectId: string,
  knowledgeBaseId: string,
  body: HitTestInput,
): Promise<HitTestResult> {
  return post<HitTestResult>(`${knowledgeBasesUrl(projectId, knowledgeBaseId)}/hit-test`, body);
}

// A mutation, not a query: each press of 测试 is a fresh measurement, never served from cache.
export function useHitTestKnowledgeBase(projectId: string, knowledgeBaseId: string) {
  return useMutation({
    mutationFn: (body: HitTestInput) => hitTestKnowledgeBase(projectId, knowledgeBaseId, body),
  });
}
