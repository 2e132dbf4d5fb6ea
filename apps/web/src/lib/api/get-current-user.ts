import type { CurrentUser } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get, type RequestConfig } from '@/lib/request';

// Shared, not a feature's: the dashboard, the account page and sign-up all read the same user,
// and one query key lets a profile edit refresh every one of them.
export const CURRENT_USER_QUERY_KEY = ['current-user'] as const;

export function getCurrentUser(config?: RequestConfig): Promise<CurrentUser> {
  return get<CurrentUser>('/api/user/current', config);
}

export const currentUserQueryOptions = () =>
  queryOptions({
    queryKey: CURRENT_USER_QUERY_KEY,
    queryFn: () => getCurrentUser(),
  });

export function useCurrentUser() {
  return useQuery(currentUserQueryOptions());
}
