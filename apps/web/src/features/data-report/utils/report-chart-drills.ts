import type { ReportDrill, ReportPoint } from '@callpilot/contracts';
import type { ChartDrill } from '@/components/drill-chart-picks';

export type { ChartDrill, ChartPick } from '@/components/drill-chart-picks';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * A figure's drill narrowed to one bucket of its trend, [at, at + an hour or a China day): the
 * list's `to` is inclusive, so its last millisecond.
 */
export function bucketDrill(
  drill: ReportDrill | null | undefined,
  at: string,
  granularity: 'hour' | 'day',
): ReportDrill | null {
  if (!drill) return null;
  const start = Date.parse(at);
  if (Number.isNaN(start)) return null;
  const end = start + (granularity === 'hour' ? HOUR_MS : DAY_MS);
  return { ...drill, from: new Date(start).toISOString(), to: new Date(end - 1).toISOString() };
}

/**
 * A trend chart's drill: line `seriesIndex` is `lines[seriesIndex]`, whose figure drill is
 * narrowed to the clicked bucket. A line without a drill (a sum the list has no single filter
 * for) does not drill.
 */
export function trendDrill(
  series: { granularity: 'hour' | 'day'; points: ReportPoint[] },
  lines: { drill: ReportDrill | null | undefined }[],
): ChartDrill {
  return ({ seriesIndex, dataIndex }) => {
    const point = series.points[dataIndex];
    return point ? bucketDrill(lines[seriesIndex]?.drill, point.at, series.granularity) : null;
  };
}

/**
 * A heat-map cell (weekday × hour) is one hour of one day only while the range holds each weekday
 * at most once: up to 7 days it drills to that hour; a longer range mixes several days in a cell,
 * which the list has no filter for, so it does not drill.
 */
export function heatCellDrill(
  drill: ReportDrill | null | undefined,
  range: { from: string; to: string },
  cell: { weekday: number; hour: number },
): ReportDrill | null {
  if (!drill) return null;
  const first = Date.parse(`${range.from}T00:00:00Z`);
  const last = Date.parse(`${range.to}T00:00:00Z`);
  if (Number.isNaN(first) || Number.isNaN(last)) return null;
  const days = Math.round((last - first) / DAY_MS) + 1;
  if (days > 7) return null;
  for (let i = 0; i < days; i++) {
    const day = new Date(first + i * DAY_MS);
    const weekday = day.getUTCDay() || 7;
    if (weekday !== cell.weekday) continue;
    const hour = String(cell.hour).padStart(2, '0');
    const start = Date.parse(`${day.toISOString().slice(0, 10)}T${hour}:00:00+08:00`);
    return { ...drill, from: new Date(start).toISOString(), to: new Date(start + HOUR_MS - 1).toISOString() };
  }
  return null;
}
