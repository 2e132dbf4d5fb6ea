import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import type { ReportQuery } from '../utils/report-range';
import { type ReportName, reportKeys, reportUrl } from './report-keys';

/**
 * One report for the page's query. The charts keep the previous range's figures while another
 * loads rather than blinking empty. Null query: the URL's range is invalid, nothing to ask.
 */
export function useReport<T>(projectId: string, report: ReportName, query: ReportQuery | null) {
  return useQuery({
    queryKey: reportKeys.report(projectId, report, query ?? { from: '', to: '', granularity: 'auto' }),
    queryFn: () => get<T>(reportUrl(projectId, report), { params: query, showLoading: false }),
    enabled: query !== null && projectId !== '',
    placeholderData: keepPreviousData,
  });
}
