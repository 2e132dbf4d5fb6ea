import type { SpeechProviderTestResult } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { projectUrl } from './assistant-query-keys';

export function testSpeechProvider(projectId: string, id: string): Promise<SpeechProviderTestResult> {
  // The result is shown beside the profile, failed or not, so the toast would only repeat it.
  return post<SpeechProviderTestResult>(
    projectUrl(projectId, `/speech-providers/${encodeURIComponent(id)}/test`),
    undefined,
    { showError: false },
  );
}

export function useTestSpeechProvider(projectId: string) {
  return useMutation({ mutationFn: (id: string) => testSpeechProvider(projectId, id) });
}
