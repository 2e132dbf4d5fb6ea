// How a click on an ECharts element maps to the data item it stands for; charts whose figures
// open lists (reports, the home page) share it.

/** What a click on a chart stands for: a series and the index of its data item (bar, point, cell). */
export type ChartPick = { seriesIndex: number; dataIndex: number };

/** The figure behind a chart element as the call list's filters; null where the list cannot show it. */
export type ChartDrill = (pick: ChartPick) => Record<string, string> | null;

/** The pick of an ECharts item click (a bar, a funnel step, a heat-map cell); null off the series. */
export function itemPick(params: { componentType?: string; seriesIndex?: number; dataIndex?: number }) {
  if (params.componentType !== 'series') return null;
  if (typeof params.seriesIndex !== 'number' || typeof params.dataIndex !== 'number') return null;
  return { seriesIndex: params.seriesIndex, dataIndex: params.dataIndex };
}

/**
 * The pick of a click inside a line chart's grid: the category under the pointer, and the line
 * whose value there is nearest to the clicked height. Lines are thin and their points hidden
 * until hovered, so a click anywhere in the column counts, as the axis tooltip does.
 */
export function axisPick(
  series: { data?: unknown }[],
  categoryIndex: number,
  clickedValue: number,
): ChartPick | null {
  const length = Math.max(0, ...series.map((s) => (Array.isArray(s.data) ? s.data.length : 0)));
  if (length === 0 || !Number.isFinite(categoryIndex)) return null;
  const dataIndex = Math.min(length - 1, Math.max(0, Math.round(categoryIndex)));
  let best: ChartPick | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  series.forEach((s, seriesIndex) => {
    const value = Array.isArray(s.data) ? s.data[dataIndex] : undefined;
    if (typeof value !== 'number') return;
    const distance = Math.abs(value - clickedValue);
    if (distance < bestDistance) {
      best = { seriesIndex, dataIndex };
      bestDistance = distance;
    }
  });
  return best;
}
