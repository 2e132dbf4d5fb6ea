import type { SmsMessage } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { smsKeys, smsMessagesUrl } from './sms-query-keys';

export function getSmsMessage(projectId: string, id: string): Promise<SmsMessage> {
  return get<SmsMessage>(smsMessagesUrl(projectId, `/${encodeURIComponent(id)}`));
}

export const smsMessageQueryOptions = (projectId: string, id: string) =>
  queryOptions({ queryKey: smsKeys.message(projectId, id), queryFn: () => getSmsMessage(projectId, id) });

/** One record, fresh: the list row may be older than the latest receipt. */
export function useSmsMessage(projectId: string | undefined, id: string | null) {
  return useQuery({
    ...smsMessageQueryOptions(projectId ?? '', id ?? ''),
    enabled: Boolean(projectId && id),
  });
}
