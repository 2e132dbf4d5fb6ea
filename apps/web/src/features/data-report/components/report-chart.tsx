import { BarChart, FunnelChart, HeatmapChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent, VisualMapComponent } from 'echarts/components';
import { type EChartsCoreOption, init, use } from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';

// Only the pieces the reports draw, so the chunk stays small. SVG rather than canvas: the charts
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

/** One ECharts chart; `label` names it for screen readers (the figures are in the tables below). */
export function ReportChart({
  option,
  label,
  height = 280,
}: {
  option: EChartsCoreOption;
  label: string;
  height?: number;
}) {
  const element = useRef<HTMLDivElement>(null);
  const chart = useRef<ReturnType<typeof init> | null>(null);

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
