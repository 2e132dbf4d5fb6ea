import type { Paged, Trunk } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { get } from '@/lib/request';

// One place for the trunks' URLs and query keys, so a write invalidates exactly what it changed
// (the list, and the numbers' page, which shows each number's trunk).

export const trunksUrl = (projectId: string, path = '') => projectUrl(projectId, `/trunks${path}`);

export const trunkUrl = (projectId: string, trunkId: string, path = '') =>
  trunksUrl(projectId, `/${encodeURIComponent(trunkId)}${path}`);

export const trunkKeys = {
  all: (projectId: string) => ['projects', projectId, 'trunks'] as const,
  list: (projectId: string, page: TrunkPage) => [...trunkKeys.all(projectId), 'list', page] as const,
  options: (projectId: string) => [...trunkKeys.all(projectId), 'options'] as const,
};

export type TrunkPage = { page: number; pageSize: number };

/** Status is live (registration, OPTIONS), so the list is read again this often while it is shown. */
export const TRUNK_STATUS_POLL_MS = 5000;

export function getTrunks(projectId: string, page: TrunkPage): Promise<Paged<Trunk>> {
  return get<Paged<Trunk>>(trunksUrl(projectId), { params: page, showLoading: false });
}

export function useTrunks(projectId: string | undefined, page: TrunkPage) {
  return useQuery({
    ...queryOptions({
      queryKey: trunkKeys.list(projectId ?? '', page),
      queryFn: () => getTrunks(projectId ?? '', page),
      // The table keeps the current page on screen while the next one loads.
      placeholderData: keepPreviousData,
    }),
    enabled: Boolean(projectId),
    // Not while the tab is hidden (refetchIntervalInBackground stays false): nobody is looking.
    refetchInterval: TRUNK_STATUS_POLL_MS,
  });
}

/**
 * Every trunk of the project, for the number form's 线路 picker. A project has at most 50 trunks
 * (the server's cap), so one page of 100 is all of them.
 */
export function useTrunkOptions(projectId: string | undefined, { enabled = true } = {}) {
  return useQuery({
    queryKey: trunkKeys.options(projectId ?? ''),
    queryFn: async () => (await getTrunks(projectId ?? '', { page: 1, pageSize: 100 })).items,
    enabled: enabled && Boolean(projectId),
  });
}
