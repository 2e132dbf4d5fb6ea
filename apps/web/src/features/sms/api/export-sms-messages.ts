import { useMutation } from '@tanstack/react-query';
import dayjs from 'dayjs';
import { getBlob, saveBlob } from '@/lib/request';
import { type SmsMessageListParams, smsMessagesUrl } from './sms-query-keys';

export type SmsExportFormat = 'csv' | 'xlsx';

/** Downloads the filtered records and saves them, named by the server or else by the time now. */
export function useExportSmsMessages(projectId: string) {
  return useMutation({
    mutationFn: async ({ filters, format }: { filters: SmsMessageListParams; format: SmsExportFormat }) => {
      const { blob, fileName } = await getBlob(smsMessagesUrl(projectId, '/export'), {
        params: { ...filters, format },
      });
      saveBlob(blob, fileName ?? `短信发送记录-${dayjs().format('YYYYMMDD-HHmmss')}.${format}`);
    },
  });
}
