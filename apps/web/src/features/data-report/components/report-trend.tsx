import type { ReportDrill, ReportPoint } from '@callpilot/contracts';
import { useMemo } from 'react';
import { DrillChart } from '@/components/drill-chart';
import { trendDrill } from '../utils/report-chart-drills';
import { trendOption } from '../utils/report-charts';
import { valueKeys, valueKind, valueLabel } from '../utils/report-values';

/**
 * The counts of a report over time (rates would share no scale with them). `drills` gives each
 * count the drill of its figure; a click on a line opens that figure's calls of the bucket.
 */
export function ReportTrend({
  series,
  label,
  drills = {},
}: {
  series: { granularity: 'hour' | 'day'; points: ReportPoint[] };
  label: string;
  drills?: Record<string, ReportDrill | null | undefined>;
}) {
  const keys = useMemo(
    () => valueKeys(series.points.map((point) => point.values)).filter((key) => valueKind(key) === 'count'),
    [series],
  );
  const option = useMemo(
    () =>
      trendOption(
        series,
        keys.map((key) => ({ key, label: valueLabel(key) })),
      ),
    [series, keys],
  );
  const drill = useMemo(
    () =>
      trendDrill(
        series,
        keys.map((key) => ({ drill: drills[key] })),
      ),
    [series, keys, drills],
  );
  const drillable = keys.some((key) => drills[key]);
  return <DrillChart option={option} label={label} pickBy="axis" {...(drillable ? { drill } : {})} />;
}
