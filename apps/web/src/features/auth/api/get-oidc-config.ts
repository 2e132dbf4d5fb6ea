import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';

export type OidcConfig = { enabled: boolean; name: string };

// Silent: third-party login is optional, and a server without it must not greet visitors with a toast.
export function getOidcConfig(): Promise<OidcConfig> {
  return get<OidcConfig>('/auth/oidc/config', { showError: false });
}

export const oidcConfigQueryOptions = () =>
  queryOptions({ queryKey: ['oidc-config'], queryFn: getOidcConfig, staleTime: Number.POSITIVE_INFINITY });

export function useOidcConfig() {
  return useQuery(oidcConfigQueryOptions());
}
