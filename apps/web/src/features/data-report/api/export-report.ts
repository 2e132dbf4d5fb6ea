import { useMutation } from '@tanstack/react-query';
import { getBlob, saveBlob } from '@/lib/request';
import type { ReportQuery } from '../utils/report-range';
import { type ReportName, reportUrl } from './report-keys';

export type ReportExportFormat = 'csv' | 'xlsx';

/** Downloads the report as the page shows it (same query) and saves it. */
export function useExportReport(projectId: string, report: ReportName, title: string) {
  return useMutation({
    mutationFn: async ({ query, format }: { query: ReportQuery; format: ReportExportFormat }) => {
      const { blob, fileName } = await getBlob(reportUrl(projectId, report, '/export'), {
        params: { ...query, format },
      });
      saveBlob(blob, fileName ?? `${title}-${query.from}-${query.to}.${format}`);
    },
  });
}
