import type { CallList } from '@callpilot/contracts';
import { get, type RequestConfig } from '@/lib/request';
import { callsUrl } from './call-query-keys';

export type CallListQuery = Record<string, string | number>;

/** GET /calls: the records list API, which every list of calls (records, a task's, the latest) reads. */
export function getCalls(
  projectId: string,
  query: CallListQuery,
  config: Omit<RequestConfig, 'params'> = {},
): Promise<CallList> {
  return get<CallList>(callsUrl(projectId), { ...config, params: query });
}
