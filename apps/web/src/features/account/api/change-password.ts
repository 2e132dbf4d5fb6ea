import { useMutation } from '@tanstack/react-query';
import { put } from '@/lib/request';

export type ChangePassword = { oldPassword: string; password: string };

export function changePassword(body: ChangePassword): Promise<unknown> {
  return put<unknown>('/api/user/password', body);
}

export function useChangePassword({ onSuccess }: { onSuccess?: () => void } = {}) {
  return useMutation({ mutationFn: changePassword, onSuccess });
}
