import type { SmsSignature } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { postForm } from '@/lib/request';
import { smsKeys, smsReviewUrl } from './sms-query-keys';

/** 资质证明: PNG, JPG or PDF up to 5 MB; the server checks the bytes, not the name. */
export function uploadSmsSignatureProof(projectId: string, id: string, file: File): Promise<SmsSignature> {
  const form = new FormData();
  form.append('file', file, file.name);
  return postForm<SmsSignature>(smsReviewUrl(projectId, 'signatures', id, '/proof'), form, {
    showError: false,
  });
}

export function useUploadSmsSignatureProof(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, file }: { id: string; file: File }) => uploadSmsSignatureProof(projectId, id, file),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: smsKeys.lists(projectId, 'signatures') }),
  });
}
