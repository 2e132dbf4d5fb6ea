import type { ResetPasswordDoneRequest } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';

/** Sets the new password with the one-time token of an e-mailed reset or change-password link. */
export function resetPasswordDone(body: ResetPasswordDoneRequest): Promise<unknown> {
  return post<unknown>('/auth/reset_password_done', body);
}

export function useResetPasswordDone({ onSuccess }: { onSuccess?: () => void } = {}) {
  return useMutation({ mutationFn: resetPasswordDone, onSuccess });
}
