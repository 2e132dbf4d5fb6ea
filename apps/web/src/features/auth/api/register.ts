import type { RegisterRequest, SessionToken } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { setToken } from '@/lib/auth-token';
import { post } from '@/lib/request';

export function register(body: RegisterRequest): Promise<SessionToken> {
  return post<SessionToken>('/auth/register', body);
}

export function useRegister({ onSuccess }: { onSuccess?: () => void } = {}) {
  return useMutation({
    mutationFn: register,
    onSuccess: (session) => {
      setToken(session.token);
      onSuccess?.();
    },
  });
}
