import type { ReportPoint } from '@callpilot/contracts';
import dayjs from 'dayjs';
import type { EChartsCoreOption } from 'echarts/core';

const WEEKDAYS = ['周一', '周二', '周三', '周四', '周五', '周六', '周日'];

/** A bucket's label in China time: its hour within the range, or its day. */
export function bucketLabel(at: string, granularity: 'hour' | 'day'): string {
  const china = new Date(Date.parse(at) + 8 * 3_600_000).toISOString();
  const day = dayjs(china.slice(0, 10)).format('MM-DD');
  return granularity === 'hour' ? `${day} ${china.slice(11, 13)}:00` : day;
}

/** Lines over time, one per named value. */
export function trendOption(
  series: { granularity: 'hour' | 'day'; points: ReportPoint[] },
  lines: { key: string; label: string }[],
): EChartsCoreOption {
  return {
    tooltip: { trigger: 'axis' },
    legend: { data: lines.map((line) => line.label) },
    grid: { left: 48, right: 24, top: 36, bottom: 32 },
    xAxis: {
      type: 'category',
      data: series.points.map((point) => bucketLabel(point.at, series.granularity)),
    },
    yAxis: { type: 'value' },
    series: lines.map((line) => ({
      name: line.label,
      type: 'line',
      smooth: true,
      showSymbol: false,
      data: series.points.map((point) => point.values[line.key] ?? 0),
    })),
  };
}

/** Bars per category, stacked by part (e.g. grades per assistant). */
export function stackedBarOption(
  categories: string[],
  parts: { label: string; values: number[] }[],
): EChartsCoreOption {
  return {
    tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
    legend: { data: parts.map((part) => part.label) },
    grid: { left: 48, right: 24, top: 36, bottom: 32 },
    xAxis: { type: 'category', data: categories },
    yAxis: { type: 'value' },
    series: parts.map((part) => ({ name: part.label, type: 'bar', stack: 'total', data: part.values })),
  };
}

export function barOption(categories: string[], label: string, values: number[]): EChartsCoreOption {
  return stackedBarOption(categories, [{ label, values }]);
}

/** Steps that each keep fewer calls (flow nodes, hang-ups by turn). */
export function funnelOption(steps: { label: string; value: number }[]): EChartsCoreOption {
  return {
    tooltip: { trigger: 'item' },
    series: [
      {
        type: 'funnel',
        sort: 'none',
        left: '10%',
        width: '80%',
        label: { show: true, position: 'inside' },
        data: steps.map((step) => ({ name: step.label, value: step.value })),
      },
    ],
  };
}

/** Calls by hour of day × weekday (1 Monday … 7 Sunday). */
export function heatmapOption(cells: { weekday: number; hour: number; value: number }[]): EChartsCoreOption {
  const max = Math.max(1, ...cells.map((cell) => cell.value));
  return {
    tooltip: { position: 'top' },
    grid: { left: 48, right: 24, top: 12, bottom: 64 },
    xAxis: {
      type: 'category',
      data: Array.from({ length: 24 }, (_, hour) => `${hour}时`),
      splitArea: { show: true },
    },
    yAxis: { type: 'category', data: WEEKDAYS, splitArea: { show: true } },
    visualMap: { min: 0, max, calculable: true, orient: 'horizontal', left: 'center', bottom: 0 },
    series: [
      {
        type: 'heatmap',
        data: cells.map((cell) => [cell.hour, cell.weekday - 1, cell.value]),
        label: { show: false },
      },
    ],
  };
}
