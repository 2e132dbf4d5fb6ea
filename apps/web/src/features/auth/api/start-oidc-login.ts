import { useMutation } from '@tanstack/react-query';
import { get } from '@/lib/request';

export type OidcStart = { authorizationUrl: string };

/** Asks the server for the provider's authorization URL; the server keeps `redirect` with the state. */
export function startOidcLogin(redirect: string): Promise<OidcStart> {
  return get<OidcStart>('/auth/oidc/start', { params: { redirect } });
}

export function useStartOidcLogin() {
  return useMutation({
    mutationFn: startOidcLogin,
    onSuccess: ({ authorizationUrl }) => window.location.assign(authorizationUrl),
  });
}
