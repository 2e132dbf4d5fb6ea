import type { Paged, SmsSignature } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { type SmsReviewListParams, smsKeys, smsReviewUrl } from './sms-query-keys';

export function getSmsSignatures(
  projectId: string,
  params: SmsReviewListParams,
): Promise<Paged<SmsSignature>> {
  return get<Paged<SmsSignature>>(smsReviewUrl(projectId, 'signatures'), { params });
}

export const smsSignaturesQueryOptions = (projectId: string, params: SmsReviewListParams) =>
  queryOptions({
    queryKey: smsKeys.list(projectId, 'signatures', params),
    queryFn: () => getSmsSignatures(projectId, params),
  });

export function useSmsSignatures(projectId: string | undefined, params: SmsReviewListParams) {
  return useQuery({
    ...smsSignaturesQueryOptions(projectId ?? '', params),
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
  });
}
