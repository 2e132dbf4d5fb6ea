import { BarChart, FunnelChart, HeatmapChart, LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent, VisualMapComponent } from 'echarts/components';
import { type EChartsCoreOption, init, use } from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';
import { useNavigate } from 'react-router';
import { callListHref } from '@/config/paths';
import { axisPick, type ChartDrill, type ChartPick, itemPick } from './drill-chart-picks';

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

/**
 * One ECharts chart; `label` names it for screen readers (the figures are in the tables below).
 * With `drill`, clicking an element opens the calls behind its figure: bars, funnel steps and
 * heat-map cells by the element itself (`pickBy` 'item'), lines by the column clicked and the
 * line nearest to the pointer ('axis').
 */
export function DrillChart({
  option,
  label,
  height = 280,
  drill,
  pickBy = 'item',
}: {
  option: EChartsCoreOption;
  label: string;
  height?: number;
  drill?: ChartDrill;
  pickBy?: 'item' | 'axis';
}) {
  const element = useRef<HTMLDivElement>(null);
  const chart = useRef<ReturnType<typeof init> | null>(null);
  const navigate = useNavigate();
  // The handlers are bound once per chart; they read the current option and drill from here.
  const latest = useRef({ option, drill, pickBy, navigate });
  latest.current = { option, drill, pickBy, navigate };

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
    const open = (pick: ChartPick | null) => {
      const target = pick ? latest.current.drill?.(pick) : null;
      if (target) latest.current.navigate(callListHref(target));
    };
    instance.on('click', (params) => {
      if (latest.current.pickBy === 'item') open(itemPick(params));
    });
    instance.getZr().on('click', (event) => {
      if (latest.current.pickBy !== 'axis' || !latest.current.drill) return;
      const point = [event.offsetX, event.offsetY];
      if (!instance.containPixel('grid', point)) return;
      const [categoryIndex, value] = instance.convertFromPixel({ gridIndex: 0 }, point) as number[];
      const series = (latest.current.option.series ?? []) as { data?: unknown }[];
      open(axisPick(Array.isArray(series) ? series : [series], categoryIndex ?? Number.NaN, value ?? 0));
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

  return (
    <div
      ref={element}
      role="img"
      aria-label={label}
      style={{ height }}
      className={drill && pickBy === 'axis' ? 'w-full cursor-pointer' : 'w-full'}
    />
  );
}
