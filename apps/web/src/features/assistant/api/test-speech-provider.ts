import type { SpeechProviderTestResult } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post, postForm } from '@/lib/request';
import { projectUrl } from './assistant-query-keys';

/** Recognises the built-in sample, or `recording` (a WAV the user chose) when given. */
export function testSpeechProvider(
  projectId: string,
  id: string,
  recording?: File,
): Promise<SpeechProviderTestResult> {
  const url = projectUrl(projectId, `/speech-providers/${encodeURIComponent(id)}/test`);
  // The result is shown beside the profile, failed or not, so the toast would only repeat it.
  return recording
    ? postForm<SpeechProviderTestResult>(url, { file: recording }, { showError: false, retry: 0 })
    : post<SpeechProviderTestResult>(url, undefined, { showError: false });
}

export function useTestSpeechProvider(projectId: string) {
  return useMutation({ mutationFn: (id: string) => testSpeechProvider(projectId, id) });
}
