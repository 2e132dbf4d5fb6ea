import type { ReportPoint } from '@callpilot/contracts';
import { useMemo } from 'react';
import { trendOption } from '../utils/report-charts';
import { valueKeys, valueKind, valueLabel } from '../utils/report-values';
import { ReportChart } from './report-chart';

/** The counts of a report over time (rates would share no scale with them). */
export function ReportTrend({
  series,
  label,
}: {
  series: { granularity: 'hour' | 'day'; points: ReportPoint[] };
  label: string;
}) {
  const option = useMemo(() => {
    const keys = valueKeys(series.points.map((point) => point.values)).filter(
      (key) => valueKind(key) === 'count',
    );
    return trendOption(
      series,
      keys.map((key) => ({ key, label: valueLabel(key) })),
    );
  }, [series]);
  return <ReportChart option={option} label={label} />;
}
