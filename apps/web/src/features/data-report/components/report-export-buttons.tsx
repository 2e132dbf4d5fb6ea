import { Button } from 'antd';
import { toast } from 'sonner';
import { type ReportExportFormat, useExportReport } from '../api/export-report';
import type { ReportName } from '../api/report-keys';
import type { ReportQuery } from '../utils/report-range';

/** 导出 CSV / 导出 Excel of the report as shown: same range and filters. */
export function ReportExportButtons({
  projectId,
  report,
  title,
  query,
}: {
  projectId: string;
  report: ReportName;
  title: string;
  query: ReportQuery | null;
}) {
  const exportReport = useExportReport(projectId, report, title);
  const start = (format: ReportExportFormat) => {
    if (!query) return;
    exportReport.mutate({ query, format }, { onSuccess: () => toast.success('导出完成') });
  };
  const pendingFormat = exportReport.isPending ? exportReport.variables?.format : undefined;
  return (
    <>
      <Button
        disabled={!query || exportReport.isPending}
        loading={pendingFormat === 'csv'}
        onClick={() => start('csv')}
      >
        导出 CSV
      </Button>
      <Button
        disabled={!query || exportReport.isPending}
        loading={pendingFormat === 'xlsx'}
        onClick={() => start('xlsx')}
      >
        导出 Excel
      </Button>
    </>
  );
}
