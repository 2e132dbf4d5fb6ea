import type { ContactStatus, Paged, TaskContact } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { taskKeys, taskUrl } from './call-task-query-keys';

export type TaskContactParams = { page: number; pageSize: number; status?: ContactStatus; phone?: string };

export function getTaskContacts(
  projectId: string,
  taskId: string,
  params: TaskContactParams,
): Promise<Paged<TaskContact>> {
  const query = Object.fromEntries(
    Object.entries(params).filter(([, value]) => value !== undefined && value !== ''),
  );
  return get<Paged<TaskContact>>(taskUrl(projectId, taskId, '/contacts'), {
    params: query,
    showLoading: false,
  });
}

export const taskContactsQueryOptions = (projectId: string, taskId: string, params: TaskContactParams) =>
  queryOptions({
    queryKey: [...taskKeys.contacts(projectId, taskId), params],
    queryFn: () => getTaskContacts(projectId, taskId, params),
    placeholderData: keepPreviousData,
  });

export function useTaskContacts(
  projectId: string | undefined,
  taskId: string | undefined,
  params: TaskContactParams,
) {
  return useQuery({
    ...taskContactsQueryOptions(projectId ?? '', taskId ?? '', params),
    enabled: Boolean(projectId && taskId),
  });
}
