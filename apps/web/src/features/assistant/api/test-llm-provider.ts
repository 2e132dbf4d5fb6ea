import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { projectUrl } from './assistant-query-keys';

export type LlmProviderTestResult = { ok: boolean; latencyMs: number; message: string };

export function testLlmProvider(projectId: string, id: string): Promise<LlmProviderTestResult> {
  // The result is shown beside the profile, failed or not, so the toast would only repeat it.
  return post<LlmProviderTestResult>(
    projectUrl(projectId, `/llm-providers/${encodeURIComponent(id)}/test`),
    undefined,
    { showError: false },
  );
}

export function useTestLlmProvider(projectId: string) {
  return useMutation({ mutationFn: (id: string) => testLlmProvider(projectId, id) });
}
