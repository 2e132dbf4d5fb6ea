import { useMutation } from '@tanstack/react-query';
import { get } from '@/lib/request';

export type VerifyResetCode = { target: string; code: string };

export function verifyResetCode(query: VerifyResetCode): Promise<{ valid: true }> {
  return get<{ valid: true }>('/api/user/verify_code', { params: query });
}

export function useVerifyResetCode({ onSuccess }: { onSuccess?: () => void } = {}) {
  return useMutation({ mutationFn: verifyResetCode, onSuccess });
}
