import type { ReportRow } from '@callpilot/contracts';
import { Table } from 'antd';
import { formatFigure } from '../utils/report-format';
import { valueKeys, valueKind, valueLabel } from '../utils/report-values';
import { ReportDrillLink } from './report-drill-link';

/** A breakdown (by number, by flow, by knowledge base): one column per value, counts open their calls. */
export function ReportRowsTable({
  rows,
  keyTitle,
  label,
}: {
  rows: ReportRow[];
  keyTitle: string;
  label: string;
}) {
  const keys = valueKeys(rows.map((row) => row.values));
  return (
    <Table<ReportRow>
      aria-label={label}
      size="small"
      rowKey="key"
      pagination={rows.length > 10 ? { pageSize: 10 } : false}
      dataSource={rows}
      columns={[
        { title: keyTitle, dataIndex: 'label', key: 'label' },
        ...keys.map((key) => ({
          title: valueLabel(key),
          key,
          align: 'right' as const,
          sorter: (a: ReportRow, b: ReportRow) => (a.values[key] ?? 0) - (b.values[key] ?? 0),
          render: (_: unknown, row: ReportRow) => {
            const value = row.values[key];
            if (value === undefined) return '—';
            const text = formatFigure(value, valueKind(key));
            // Rates and durations are not call counts; the row's calls sit behind its counts.
            return valueKind(key) === 'count' ? (
              <ReportDrillLink drill={row.drill}>{text}</ReportDrillLink>
            ) : (
              text
            );
          },
        })),
      ]}
    />
  );
}
