import type { LoginRequest, SessionToken } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { setToken } from '@/lib/auth-token';
import { post } from '@/lib/request';

export function login(credentials: LoginRequest): Promise<SessionToken> {
  return post<SessionToken>('/auth/login', credentials);
}

export function useLogin({ onSuccess }: { onSuccess?: (session: SessionToken) => void } = {}) {
  return useMutation({
    mutationFn: login,
    onSuccess: (session) => {
      setToken(session.token);
      onSuccess?.(session);
    },
  });
}
