import type { ProjectNumber } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { numbersUrl, numberUrl, projectNumberKeys } from '@/entities/project-number/api/get-project-numbers';
import { post, put } from '@/lib/request';

export type ProjectNumberBody = {
  number: string;
  label: string;
  enabled: boolean;
  /** The SIP trunk its calls go through, null for the simulated carrier; absent keeps it (on update). */
  trunkId?: string | null;
};

/** Adds a number; the server stores it normalised (a mobile, or a landline with its area code). */
export function createProjectNumber(projectId: string, body: ProjectNumberBody): Promise<ProjectNumber> {
  return post<ProjectNumber>(numbersUrl(projectId), body);
}

/** Changes a number's 备注, 启用 or 线路; the number itself is its identity. */
export function updateProjectNumber(projectId: string, body: ProjectNumberBody): Promise<ProjectNumber> {
  return put<ProjectNumber>(numberUrl(projectId, body.number), body);
}

export function useSaveProjectNumber(projectId: string, { creating }: { creating: boolean }) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ProjectNumberBody) =>
      creating ? createProjectNumber(projectId, body) : updateProjectNumber(projectId, body),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: projectNumberKeys.all(projectId) }),
  });
}
