import type { ConsoleConfig } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';

export function getConsoleConfig(): Promise<ConsoleConfig> {
  return get<ConsoleConfig>('/api/console/config', { showLoading: false });
}

export const consoleConfigQueryOptions = () =>
  queryOptions({
    queryKey: ['console-config'],
    queryFn: getConsoleConfig,
    staleTime: Number.POSITIVE_INFINITY,
  });

export function useConsoleConfig({ enabled = true }: { enabled?: boolean } = {}) {
  return useQuery({ ...consoleConfigQueryOptions(), enabled });
}
