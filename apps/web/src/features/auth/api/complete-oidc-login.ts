import type { OidcLoginResult } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { setToken } from '@/lib/auth-token';
import { post } from '@/lib/request';

/** `iss` (RFC 9207) is passed through when the provider sends it, so the server can check it. */
export type OidcCallback = { code: string; state: string; iss?: string };

// No toast: the page itself shows the failure, with the way back to the login page.
export function completeOidcLogin(body: OidcCallback): Promise<OidcLoginResult> {
  return post<OidcLoginResult>('/auth/oidc/callback', body, { showError: false });
}

export function useCompleteOidcLogin({ onSuccess }: { onSuccess?: (result: OidcLoginResult) => void } = {}) {
  return useMutation({
    mutationFn: completeOidcLogin,
    onSuccess: (result) => {
      setToken(result.token);
      onSuccess?.(result);
    },
  });
}
