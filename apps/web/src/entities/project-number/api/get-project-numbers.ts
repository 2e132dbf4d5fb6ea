import type { ProjectNumber } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { get } from '@/lib/request';

// The project's numbers: the caller numbers a task shows (呼出) and the numbers callers dial (呼入).
// Read by the task form, the numbers page and the assistant editor; written by the numbers page,
// which invalidates this one key.

export const numbersUrl = (projectId: string, path = '') => projectUrl(projectId, `/numbers${path}`);

export const numberUrl = (projectId: string, number: string, path = '') =>
  numbersUrl(projectId, `/${encodeURIComponent(number)}${path}`);

export const projectNumberKeys = {
  all: (projectId: string) => ['projects', projectId, 'numbers'] as const,
};

export async function getProjectNumbers(projectId: string): Promise<ProjectNumber[]> {
  return (await get<ProjectNumber[]>(numbersUrl(projectId), { showLoading: false })) ?? [];
}

export const projectNumbersQueryOptions = (projectId: string) =>
  queryOptions({ queryKey: projectNumberKeys.all(projectId), queryFn: () => getProjectNumbers(projectId) });

export function useProjectNumbers(projectId: string | undefined, { enabled = true } = {}) {
  return useQuery({ ...projectNumbersQueryOptions(projectId ?? ''), enabled: enabled && Boolean(projectId) });
}
