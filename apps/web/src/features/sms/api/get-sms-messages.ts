import type { SmsMessageList } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { type SmsMessageListParams, smsKeys, smsMessagesUrl } from './sms-query-keys';

export function getSmsMessages(projectId: string, params: SmsMessageListParams): Promise<SmsMessageList> {
  return get<SmsMessageList>(smsMessagesUrl(projectId), { params });
}

export const smsMessagesQueryOptions = (projectId: string, params: SmsMessageListParams) =>
  queryOptions({
    queryKey: smsKeys.messageList(projectId, params),
    queryFn: () => getSmsMessages(projectId, params),
  });

/** 发送记录: one server page of the filtered records, the previous page kept while the next loads. */
export function useSmsMessages(projectId: string | undefined, params: SmsMessageListParams) {
  return useQuery({
    ...smsMessagesQueryOptions(projectId ?? '', params),
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
  });
}
