import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';

/** E-mails a one-time reset link to /forget-password?token=… (if an account has that address). */
export function sendResetPasswordMail(email: string): Promise<unknown> {
  return post<unknown>('/auth/reset_password', { email });
}

export function useSendResetPasswordMail({ onSuccess }: { onSuccess?: () => void } = {}) {
  return useMutation({ mutationFn: sendResetPasswordMail, onSuccess });
}
