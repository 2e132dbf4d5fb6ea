import type { ProjectNumber } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { projectUrl, taskKeys } from './call-task-query-keys';

export async function getProjectNumbers(projectId: string): Promise<ProjectNumber[]> {
  return (await get<ProjectNumber[]>(projectUrl(projectId, '/numbers'), { showLoading: false })) ?? [];
}

export const projectNumbersQueryOptions = (projectId: string) =>
  queryOptions({ queryKey: taskKeys.numbers(projectId), queryFn: () => getProjectNumbers(projectId) });

export function useProjectNumbers(projectId: string | undefined) {
  return useQuery({ ...projectNumbersQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
