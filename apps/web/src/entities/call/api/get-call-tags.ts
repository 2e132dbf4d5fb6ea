import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { callKeys, callsUrl } from './call-query-keys';

/** The tags in use in the project, for the 标签 filter and the tag editor. */
export async function getCallTags(projectId: string): Promise<string[]> {
  return (await get<string[]>(callsUrl(projectId, '/tags'), { showLoading: false })) ?? [];
}

export const callTagsQueryOptions = (projectId: string) =>
  queryOptions({ queryKey: callKeys.tags(projectId), queryFn: () => getCallTags(projectId) });

export function useCallTags(projectId: string | undefined) {
  return useQuery({ ...callTagsQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
