import { useMutation } from '@tanstack/react-query';
import dayjs from 'dayjs';
import { type DownloadedFile, getBlob, saveBlob } from '@/lib/request';
import { type CallRecordFilters, toCallQuery } from '../utils/call-record-filters';
import { callsUrl } from './call-record-query-keys';

export type CallExportFormat = 'csv' | 'xlsx';

export function exportCalls(
  projectId: string,
  filters: CallRecordFilters,
  format: CallExportFormat,
): Promise<DownloadedFile> {
  return getBlob(callsUrl(projectId, '/export'), { params: { ...toCallQuery(filters), format } });
}

/** Downloads the filtered records and saves them, named by the server or else by today's date. */
export function useExportCalls(projectId: string) {
  return useMutation({
    mutationFn: async ({ filters, format }: { filters: CallRecordFilters; format: CallExportFormat }) => {
      const { blob, fileName } = await exportCalls(projectId, filters, format);
      saveBlob(blob, fileName ?? `通话记录-${dayjs().format('YYYYMMDD-HHmmss')}.${format}`);
    },
  });
}
