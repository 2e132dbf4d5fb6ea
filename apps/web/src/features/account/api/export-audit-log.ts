import { useMutation } from '@tanstack/react-query';
import dayjs from 'dayjs';
import { getBlob, saveBlob } from '@/lib/request';
import { type AuditLogFilterValues, toAuditLogParams } from './get-audit-log';

/** Downloads the filtered log as CSV, named by the server or else by the time. */
export function useExportAuditLog(projectId: string) {
  return useMutation({
    mutationFn: async (filters: AuditLogFilterValues) => {
      const { blob, fileName } = await getBlob(
        `/api/project/${encodeURIComponent(projectId)}/audit-log/export`,
        {
          params: toAuditLogParams(filters),
        },
      );
      saveBlob(blob, fileName ?? `操作日志-${dayjs().format('YYYYMMDD-HHmmss')}.csv`);
    },
  });
}
