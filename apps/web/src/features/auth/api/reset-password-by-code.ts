import type { ResetPasswordByCodeRequest } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';

export function resetPasswordByCode(body: ResetPasswordByCodeRequest): Promise<unknown> {
  return post<unknown>('/api/user/reset_pwd', body);
}

export function useResetPasswordByCode({ onSuccess }: { onSuccess?: () => void } = {}) {
  return useMutation({ mutationFn: resetPasswordByCode, onSuccess });
}
