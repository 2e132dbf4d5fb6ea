import type { CodeSent } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';

/** Sends a one-time code to an e-mail address or phone number for a forgotten password. */
export function sendResetCode(target: string): Promise<CodeSent> {
  return post<CodeSent>('/api/user/send_code', { target });
}

export function useSendResetCode({ onSuccess }: { onSuccess?: (sent: CodeSent) => void } = {}) {
  return useMutation({ mutationFn: sendResetCode, onSuccess });
}
