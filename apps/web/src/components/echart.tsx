import { BarChart, FunnelChart, HeatmapChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent, VisualMapComponent } from 'echarts/components';
import { type EChartsCoreOption, init, use } from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';

// Only the pieces the console draws, so the chunk stays small. SVG rather than canvas: the charts
// are small, stay crisp when zoomed or printed, and render in jsdom for the tests.
use([
  BarChart,
  FunnelChart,
  HeatmapChart,
  LineChart,
  GridComponent,
  LegendComponent,
  TooltipComponent,
  VisualMapComponent,
  SVGRenderer,
]);

/** What ECharts tells about the element clicked: its series and its index in the series' data. */
export type EChartItem = { seriesIndex: number; dataIndex: number; seriesName?: string; name?: string };

/**
 * One ECharts chart; `label` names it for screen readers. `onItemClick` makes its elements act as
 * links (the pointer cursor shows it), e.g. to the calls behind a point.
 */
export function EChart({
  option,
  label,
  height = 280,
  onItemClick,
}: {
  option: EChartsCoreOption;
  label: string;
  height?: number;
  onItemClick?: (item: EChartItem) => void;
}) {
  const element = useRef<HTMLDivElement>(null);
  const chart = useRef<ReturnType<typeof init> | null>(null);
  const click = useRef(onItemClick);
  click.current = onItemClick;

  useEffect(() => {
    const node = element.current;
    if (!node) return;
    // A width is given when the element has none yet (hidden tab, jsdom), or ECharts refuses to draw.
    const instance = init(node, undefined, {
      renderer: 'svg',
      height,
      ...(node.clientWidth === 0 ? { width: 600 } : {}),
    });
    chart.current = instance;
    instance.on('click', (params) => {
      const p = params as Partial<EChartItem>;
      if (typeof p.seriesIndex === 'number' && typeof p.dataIndex === 'number')
        click.current?.({
          seriesIndex: p.seriesIndex,
          dataIndex: p.dataIndex,
          seriesName: p.seriesName,
          name: p.name,
        });
    });
    const observer = new ResizeObserver(() => {
      if (node.clientWidth > 0) instance.resize({ width: 'auto', height });
    });
    observer.observe(node);
    return () => {
      observer.disconnect();
      instance.dispose();
      chart.current = null;
    };
  }, [height]);

  useEffect(() => {
    chart.current?.setOption(option, { notMerge: true });
  }, [option]);

  return <div ref={element} role="img" aria-label={label} style={{ height }} className="w-full" />;
}
