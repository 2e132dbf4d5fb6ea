import type { SynthesisProviderTestResult } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { projectUrl } from './assistant-query-keys';

export function testSynthesisProvider(projectId: string, id: string): Promise<SynthesisProviderTestResult> {
  // The result is shown beside the profile, failed or not, so the toast would only repeat it.
  return post<SynthesisProviderTestResult>(
    projectUrl(projectId, `/synthesis-providers/${encodeURIComponent(id)}/test`),
    undefined,
    { showError: false, retry: 0 },
  );
}

export function useTestSynthesisProvider(projectId: string) {
  return useMutation({ mutationFn: (id: string) => testSynthesisProvider(projectId, id) });
}
