import type { CallDetail } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { callKeys, callUrl } from './call-record-query-keys';

export function getCall(projectId: string, id: string): Promise<CallDetail> {
  return get<CallDetail>(callUrl(projectId, id));
}

export const callQueryOptions = (projectId: string, id: string) =>
  queryOptions({ queryKey: callKeys.detail(projectId, id), queryFn: () => getCall(projectId, id) });

export function useCall(projectId: string | undefined, id: string | undefined) {
  return useQuery({ ...callQueryOptions(projectId ?? '', id ?? ''), enabled: Boolean(projectId && id) });
}
