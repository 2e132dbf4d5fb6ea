import { Alert, Skeleton } from 'antd';
import type { ReactNode } from 'react';
import type { ReportName } from '../api/report-keys';
import type { useReportQuery } from '../utils/use-report-query';
import { DataReportTabs } from './data-report-tabs';
import { ReportExportButtons } from './report-export-buttons';
import { ReportToolbar } from './report-toolbar';

/**
 * What every report page shares: the section's tabs, the range and filters, the export buttons,
 * and the states before there is a report to show.
 */
export function ReportFrame({
  projectId,
  report,
  exportName,
  title,
  filters,
  loading,
  failed,
  children,
}: {
  projectId: string;
  report: ReturnType<typeof useReportQuery>;
  exportName: ReportName;
  title: string;
  filters?: ReactNode;
  loading: boolean;
  failed: boolean;
  children: ReactNode;
}) {
  const { state } = report;
  return (
    <div className="flex flex-col gap-4 p-6">
      <h1 className="text-2xl font-semibold text-gray-900">数据统计</h1>
      <DataReportTabs />
      <h2 className="sr-only">{title}</h2>
      <ReportToolbar
        report={report}
        extra={
          <ReportExportButtons
            projectId={projectId}
            report={exportName}
            title={title}
            query={state.ok ? state.query : null}
          />
        }
      >
        {filters}
      </ReportToolbar>
      {!state.ok ? (
        <Alert type="error" showIcon title={state.message} description="请重新选择日期范围。" />
      ) : failed ? (
        <Alert type="error" showIcon title="报表加载失败，请稍后重试。" />
      ) : loading ? (
        <Skeleton active paragraph={{ rows: 8 }} />
      ) : (
        children
      )}
    </div>
  );
}
