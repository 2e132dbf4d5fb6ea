import type { Paged, SmsOptOut } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { type SmsOptOutListParams, smsKeys, smsUrl } from './sms-query-keys';

export function getSmsOptOuts(projectId: string, params: SmsOptOutListParams): Promise<Paged<SmsOptOut>> {
  return get<Paged<SmsOptOut>>(smsUrl(projectId, '/opt-outs'), { params });
}

export const smsOptOutsQueryOptions = (projectId: string, params: SmsOptOutListParams) =>
  queryOptions({
    queryKey: smsKeys.optOutList(projectId, params),
    queryFn: () => getSmsOptOuts(projectId, params),
  });

export function useSmsOptOuts(projectId: string | undefined, params: SmsOptOutListParams) {
  return useQuery({
    ...smsOptOutsQueryOptions(projectId ?? '', params),
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
  });
}
