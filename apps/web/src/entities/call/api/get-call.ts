import type { CallDetail } from '@callpilot/contracts';
import { get, type RequestConfig } from '@/lib/request';
import { callUrl } from './call-query-keys';

/** One call with its turns and analysis. */
export function getCall(projectId: string, id: string, config: RequestConfig = {}): Promise<CallDetail> {
  return get<CallDetail>(callUrl(projectId, id), config);
}
