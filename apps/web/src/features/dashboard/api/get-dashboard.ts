import type { DashboardSummary } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { get } from '@/lib/request';

export const dashboardUrl = (projectId: string) => projectUrl(projectId, '/dashboard');

export function getDashboard(projectId: string): Promise<DashboardSummary> {
  return get<DashboardSummary>(dashboardUrl(projectId), { showLoading: false });
}

/** Running tasks move while the page is open; a minute is fresh enough for a summary. */
export const DASHBOARD_REFRESH_MS = 60_000;

export const dashboardQueryOptions = (projectId: string) =>
  queryOptions({
    queryKey: ['projects', projectId, 'dashboard'],
    queryFn: () => getDashboard(projectId),
    refetchInterval: DASHBOARD_REFRESH_MS,
  });

export function useDashboard(projectId: string | undefined) {
  return useQuery({ ...dashboardQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
