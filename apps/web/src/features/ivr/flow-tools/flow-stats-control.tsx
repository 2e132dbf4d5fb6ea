import type { FlowNodeStats } from '@callpilot/contracts';
import { DatePicker, Spin, Switch, Tooltip } from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { useEffect, useMemo, useRef, useState } from 'react';
import { type FlowStatsRange, useFlowStats } from '@/features/ivr/api/get-flow-stats';

type DayRange = [Dayjs, Dayjs];

const lastDays = (days: number): DayRange => [
  dayjs()
    .subtract(days - 1, 'day')
    .startOf('day'),
  dayjs().startOf('day'),
];

// Built on each render: a console left open overnight must not offer yesterday's 今天.
const presets = (): { label: string; value: DayRange }[] => [
  { label: '今天', value: lastDays(1) },
  { label: '近 7 天', value: lastDays(7) },
  { label: '近 30 天', value: lastDays(30) },
];

/** Whole days in local (China) time: from the first day's midnight to the midnight after the last. */
function toRange([first, last]: DayRange): FlowStatsRange {
  return {
    from: first.startOf('day').toISOString(),
    to: last.add(1, 'day').startOf('day').toISOString(),
  };
}

/**
 * 显示统计: for the chosen days, how many calls reached each node and where callers hung up,
 * handed to the canvas through `onStats` (null when switched off). Only published versions'
 * calls count: test calls would distort the funnel.
 */
export function FlowStatsControl({
  projectId,
  flowId,
  enabled,
  onStats,
}: {
  projectId: string;
  flowId: string;
  /** False while the flow has never been published: there is nothing to count. */
  enabled: boolean;
  onStats: (stats: FlowNodeStats | null) => void;
}) {
  const [shown, setShown] = useState(false);
  const [days, setDays] = useState<DayRange>(() => lastDays(7));
  const range = useMemo(() => toRange(days), [days]);
  const active = shown && enabled;
  const stats = useFlowStats(projectId, flowId, range, { enabled: active });

  // The parent passes a new callback each render; only the figures should trigger a call.
  const onStatsRef = useRef(onStats);
  onStatsRef.current = onStats;
  const wasActive = useRef(false);
  useEffect(() => {
    if (active && stats.data) onStatsRef.current(stats.data);
    else if (!active && wasActive.current) onStatsRef.current(null);
    wasActive.current = active;
  }, [active, stats.data]);

  const toggle = (
    <Switch
      size="small"
      aria-label="显示统计"
      checked={active}
      disabled={!enabled}
      onChange={setShown}
      loading={active && stats.isFetching}
    />
  );

  return (
    <div className="flex flex-wrap items-center gap-2 text-sm">
      {enabled ? toggle : <Tooltip title="流程发布后才有来电统计">{toggle}</Tooltip>}
      <span>显示统计</span>
      <DatePicker.RangePicker
        size="small"
        aria-label="统计日期"
        value={days}
        presets={presets()}
        allowClear={false}
        disabled={!enabled}
        disabledDate={(day) => day.isAfter(dayjs(), 'day')}
        onChange={(value) => {
          if (value?.[0] && value[1]) setDays([value[0], value[1]]);
        }}
      />
      <span className="text-xs text-gray-400">仅统计已发布版本的来电</span>
      {active && stats.isPending && <Spin size="small" />}
      {active && stats.data && (
        <span aria-live="polite" className="text-xs text-gray-600">
          {stats.data.calls === 0 ? '所选时间内没有来电' : `共 ${stats.data.calls} 通来电`}
        </span>
      )}
    </div>
  );
}
