import DownOutlined from '@ant-design/icons/DownOutlined';
import { Button, Dropdown } from 'antd';
import { toast } from 'sonner';
import type { CallFilters } from '@/entities/call/utils/call-filters';
import { type CallExportFormat, useExportCalls } from '../api/export-calls';

const FORMATS: { key: CallExportFormat; label: string }[] = [
  { key: 'csv', label: 'CSV (.csv)' },
  { key: 'xlsx', label: 'Excel (.xlsx)' },
];

/** Exports what the list shows: the filters applied by the last 查询, not unsent edits. */
export function CallRecordExportButton({ projectId, filters }: { projectId: string; filters: CallFilters }) {
  const exportCalls = useExportCalls(projectId);
  return (
    <Dropdown
      trigger={['click']}
      disabled={exportCalls.isPending}
      menu={{
        items: FORMATS,
        onClick: ({ key }) =>
          exportCalls.mutate(
            { filters, format: key as CallExportFormat },
            { onSuccess: () => toast.success('导出完成') },
          ),
      }}
    >
      <Button loading={exportCalls.isPending}>
        导出
        <DownOutlined aria-hidden="true" />
      </Button>
    </Dropdown>
  );
}
