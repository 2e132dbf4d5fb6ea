import type { SmsStatistics, SmsStatisticsQuery } from '@callpilot/contracts';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { get } from '@/lib/request';
import { smsKeys } from './sms-query-keys';

export function getSmsStatistics(projectId: string, query: SmsStatisticsQuery): Promise<SmsStatistics> {
  return get<SmsStatistics>(projectUrl(projectId, '/sms/statistics'), { params: query });
}

export const smsStatisticsQueryOptions = (projectId: string, query: SmsStatisticsQuery) =>
  queryOptions({
    queryKey: smsKeys.statistics(projectId, query),
    queryFn: () => getSmsStatistics(projectId, query),
  });

export function useSmsStatistics(projectId: string | undefined, query: SmsStatisticsQuery) {
  return useQuery({
    ...smsStatisticsQueryOptions(projectId ?? '', query),
    enabled: Boolean(projectId),
    placeholderData: keepPreviousData,
  });
}
