import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';

/** Mails the signed-in user a one-time link to /forget-password?token=… to set a new password. */
export function sendChangePasswordEmail(): Promise<unknown> {
  return post<unknown>('/api/user/send_change_pwd_email');
}

export function useSendChangePasswordEmail({ onSuccess }: { onSuccess?: () => void } = {}) {
  return useMutation({ mutationFn: sendChangePasswordEmail, onSuccess });
}
