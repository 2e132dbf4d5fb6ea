import DownOutlined from '@ant-design/icons/DownOutlined';
import { Button, Dropdown } from 'antd';
import { toast } from 'sonner';
import { type SmsExportFormat, useExportSmsMessages } from '../api/export-sms-messages';
import { type SmsRecordFilters, toSmsRecordQuery } from '../utils/sms-record-query';

const FORMATS: { key: SmsExportFormat; label: string }[] = [
  { key: 'csv', label: 'CSV (.csv)' },
  { key: 'xlsx', label: 'Excel (.xlsx)' },
];

/** Exports what the list shows: the filters applied by the last 查询. */
export function SmsRecordExportButton({
  projectId,
  filters,
}: {
  projectId: string;
  filters: SmsRecordFilters;
}) {
  const exporting = useExportSmsMessages(projectId);
  return (
    <Dropdown
      trigger={['click']}
      disabled={exporting.isPending}
      menu={{
        items: FORMATS,
        onClick: ({ key }) =>
          exporting.mutate(
            { filters: toSmsRecordQuery(filters), format: key as SmsExportFormat },
            { onSuccess: () => toast.success('导出完成') },
          ),
      }}
    >
      <Button loading={exporting.isPending}>
        导出
        <DownOutlined aria-hidden="true" />
      </Button>
    </Dropdown>
  );
}
