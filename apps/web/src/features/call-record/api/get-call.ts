import { queryOptions, useQuery } from '@tanstack/react-query';
import { callKeys } from '@/entities/call/api/call-query-keys';
import { getCall } from '@/entities/call/api/get-call';

export const callQueryOptions = (projectId: string, id: string) =>
  queryOptions({ queryKey: callKeys.detail(projectId, id), queryFn: () => getCall(projectId, id) });

export function useCall(projectId: string | undefined, id: string | undefined) {
  return useQuery({ ...callQueryOptions(projectId ?? '', id ?? ''), enabled: Boolean(projectId && id) });
}
