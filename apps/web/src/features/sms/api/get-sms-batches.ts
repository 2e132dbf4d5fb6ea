import type { SmsBatchList } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { type SmsPageParams, smsKeys, smsUrl } from './sms-query-keys';

export function getSmsBatches(projectId: string, params: SmsPageParams): Promise<SmsBatchList> {
  return get<SmsBatchList>(smsUrl(projectId, '/batches'), { params });
}

export const smsBatchesQueryOptions = (projectId: string, params: SmsPageParams) =>
  queryOptions({
    queryKey: smsKeys.batchList(projectId, params),
    queryFn: () => getSmsBatches(projectId, params),
  });

/** Polls while a batch still has rows to send, so its progress moves without a reload. */
export function useSmsBatches(projectId: string | undefined, params: SmsPageParams) {
  return useQuery({
    ...smsBatchesQueryOptions(projectId ?? '', params),
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.items.some((batch) => batch.waiting > 0) ? 5_000 : false),
  });
}
