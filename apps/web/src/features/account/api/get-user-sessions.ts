import type { UserSession } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';

export const USER_SESSIONS_QUERY_KEY = ['user', 'sessions'] as const;

export function getUserSessions(): Promise<UserSession[]> {
  return get<UserSession[]>('/api/user/sessions');
}

export const userSessionsQueryOptions = () =>
  queryOptions({ queryKey: USER_SESSIONS_QUERY_KEY, queryFn: getUserSessions });

export function useUserSessions() {
  return useQuery(userSessionsQueryOptions());
}
