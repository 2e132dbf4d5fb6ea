import type { DashboardSummary, DashboardTrendPoint } from '@callpilot/contracts';
import { Segmented } from 'antd';
import { useMemo, useState } from 'react';
import { DrillChart } from '@/components/drill-chart';
import type { ChartPick } from '@/components/drill-chart-picks';
import { chinaTime } from '@/lib/format';

type View = 'hours' | 'days';

/** Today against yesterday by hour, or the last 14 days; a point opens the calls behind it. */
export function DashboardTrend({ trend }: { trend: DashboardSummary['trend'] }) {
  const [view, setView] = useState<View>('hours');

  const { option, series } = useMemo(() => {
    if (view === 'hours') {
      const hours = Array.from({ length: 24 }, (_, h) => `${String(h).padStart(2, '0')}:00`);
      const series: DashboardTrendPoint[][] = [trend.today, trend.yesterday];
      return {
        series,
        option: {
          tooltip: { trigger: 'axis' },
          legend: { data: ['今日', '昨日'], top: 0 },
          grid: { left: 40, right: 16, top: 32, bottom: 24 },
          xAxis: { type: 'category', data: hours },
          yAxis: { type: 'value', minInterval: 1 },
          series: [
            { name: '今日', type: 'line', data: trend.today.map((p) => p.calls) },
            {
              name: '昨日',
              type: 'line',
              lineStyle: { type: 'dashed' },
              data: trend.yesterday.map((p) => p.calls),
            },
          ],
        },
      };
    }
    const series: DashboardTrendPoint[][] = [trend.days, trend.days];
    return {
      series,
      option: {
        tooltip: { trigger: 'axis' },
        legend: { data: ['通话数', '接通数'], top: 0 },
        grid: { left: 40, right: 16, top: 32, bottom: 24 },
        xAxis: { type: 'category', data: trend.days.map((p) => chinaTime(p.at).format('MM-DD')) },
        yAxis: { type: 'value', minInterval: 1 },
        series: [
          { name: '通话数', type: 'bar', data: trend.days.map((p) => p.calls) },
          { name: '接通数', type: 'bar', data: trend.days.map((p) => p.answered) },
        ],
      },
    };
  }, [trend, view]);

  const drill = (pick: ChartPick) => series[pick.seriesIndex]?.[pick.dataIndex]?.drill ?? null;

  return (
    <section aria-label="通话趋势" className="rounded-lg border border-gray-200 bg-white p-5">
      <div className="mb-2 flex items-center justify-between gap-2">
        <h2 className="text-base font-medium text-gray-900">通话趋势</h2>
        <Segmented<View>
          size="small"
          value={view}
          onChange={setView}
          options={[
            { label: '今日 / 昨日（按小时）', value: 'hours' },
            { label: '近 14 天', value: 'days' },
          ]}
        />
      </div>
      <DrillChart
        option={option}
        label={
          view === 'hours'
            ? '今日与昨日每小时通话数，点击查看该小时的通话'
            : '近 14 天每日通话数与接通数，点击查看当天的通话'
        }
        height={240}
        drill={drill}
        pickBy={view === 'hours' ? 'axis' : 'item'}
      />
    </section>
  );
}
