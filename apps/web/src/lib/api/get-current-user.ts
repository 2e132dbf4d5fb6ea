import type { CurrentUser } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';

export function getCurrentUser(): Promise<CurrentUser> {
  return get<CurrentUser>('/api/user/current');
}

export const currentUserQueryOptions = () =>
  queryOptions({
    queryKey: ['current-user'],
    queryFn: getCurrentUser,
  });

export function useCurrentUser() {
  return useQuery(currentUserQueryOptions());
}
