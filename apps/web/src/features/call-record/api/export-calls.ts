import { useMutation } from '@tanstack/react-query';
import dayjs from 'dayjs';
import { callsUrl } from '@/entities/call/api/call-query-keys';
import { type CallFilters, toCallQuery } from '@/entities/call/utils/call-filters';
import { type DownloadedFile, getBlob, saveBlob } from '@/lib/request';

export type CallExportFormat = 'csv' | 'xlsx';

export function exportCalls(
  projectId: string,
  filters: CallFilters,
  format: CallExportFormat,
): Promise<DownloadedFile> {
  return getBlob(callsUrl(projectId, '/export'), { params: { ...toCallQuery(filters), format } });
}

/** Downloads the filtered records and saves them, named by the server or else by today's date. */
export function useExportCalls(projectId: string) {
  return useMutation({
    mutationFn: async ({ filters, format }: { filters: CallFilters; format: CallExportFormat }) => {
      const { blob, fileName } = await exportCalls(projectId, filters, format);
      saveBlob(blob, fileName ?? `通话记录-${dayjs().format('YYYYMMDD-HHmmss')}.${format}`);
    },
  });
}
