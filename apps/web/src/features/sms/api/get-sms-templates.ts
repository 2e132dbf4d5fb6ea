import type { Paged, SmsTemplate } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { type SmsReviewListParams, smsKeys, smsReviewUrl } from './sms-query-keys';

export function getSmsTemplates(projectId: string, params: SmsReviewListParams): Promise<Paged<SmsTemplate>> {
  return get<Paged<SmsTemplate>>(smsReviewUrl(projectId, 'templates'), { params });
}

export const smsTemplatesQueryOptions = (projectId: string, params: SmsReviewListParams) =>
  queryOptions({
    queryKey: smsKeys.list(projectId, 'templates', params),
    queryFn: () => getSmsTemplates(projectId, params),
  });

export function useSmsTemplates(projectId: string | undefined, params: SmsReviewListParams) {
  return useQuery({
    ...smsTemplatesQueryOptions(projectId ?? '', params),
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
  });
}
