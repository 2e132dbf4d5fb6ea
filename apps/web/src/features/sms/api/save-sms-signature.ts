import type { SmsSignature, SmsSignatureWriteRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post, put } from '@/lib/request';
import { smsKeys, smsReviewUrl } from './sms-query-keys';

export type SaveSmsSignature = { id?: string; body: SmsSignatureWriteRequest };

/** Creates the signature, or saves an edit of one (which puts it back to 待提交). */
export function saveSmsSignature(projectId: string, { id, body }: SaveSmsSignature): Promise<SmsSignature> {
  // The dialog shows a refusal (a name already taken, say) next to the form itself.
  return id
    ? put<SmsSignature>(smsReviewUrl(projectId, 'signatures', id), body, { showError: false })
    : post<SmsSignature>(smsReviewUrl(projectId, 'signatures'), body, { showError: false });
}

export function useSaveSmsSignature(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: SaveSmsSignature) => saveSmsSignature(projectId, input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: smsKeys.lists(projectId, 'signatures') }),
  });
}
