import { REPORT_MAX_DAYS } from '@callpilot/contracts';
import { Button, DatePicker, Select } from 'antd';
import dayjs from 'dayjs';
import type { ReactNode } from 'react';
import { toast } from 'sonner';
import { chinaToday, DAY_FORMAT, RANGE_PRESETS, RANGE_TOO_LONG, rangeDays } from '../utils/report-range';
import type { useReportQuery } from '../utils/use-report-query';

const GRANULARITIES = [
  { value: 'auto', label: '自动粒度' },
  { value: 'hour', label: '按小时' },
  { value: 'day', label: '按天' },
];

/**
 * The report's range (quick picks or any days up to a year), its granularity, the page's own
 * filters (children) and the export buttons (extra).
 */
export function ReportToolbar({
  report,
  children,
  extra,
}: {
  report: ReturnType<typeof useReportQuery>;
  children?: ReactNode;
  extra?: ReactNode;
}) {
  const today = chinaToday();
  const { state, update } = report;
  const current = state.ok ? state.query : null;
  const value = current ? ([dayjs(current.from), dayjs(current.to)] as const) : null;

  return (
    <div className="flex flex-wrap items-center gap-2">
      <fieldset aria-label="快捷日期" className="m-0 flex flex-wrap gap-1 border-0 p-0">
        {RANGE_PRESETS.map((preset) => {
          const [from, to] = preset.range(today);
          const active = current?.from === from.format(DAY_FORMAT) && current?.to === to.format(DAY_FORMAT);
          return (
            <Button
              key={preset.key}
              size="small"
              type={active ? 'primary' : 'default'}
              aria-pressed={active}
              onClick={() => update({ from: from.format(DAY_FORMAT), to: to.format(DAY_FORMAT) })}
            >
              {preset.label}
            </Button>
          );
        })}
      </fieldset>
      <DatePicker.RangePicker
        aria-label="自定义日期"
        allowClear={false}
        value={value ? [value[0], value[1]] : null}
        onChange={(dates) => {
          const [from, to] = dates ?? [];
          if (!from || !to) return;
          if (rangeDays(from, to) > REPORT_MAX_DAYS) {
            toast.error(RANGE_TOO_LONG);
            return;
          }
          update({ from: from.format(DAY_FORMAT), to: to.format(DAY_FORMAT) });
        }}
      />
      <Select
        aria-label="统计粒度"
        className="w-28"
        value={current?.granularity ?? 'auto'}
        options={GRANULARITIES}
        onChange={(granularity) => update({ granularity: granularity === 'auto' ? undefined : granularity })}
      />
      {children}
      <div className="ml-auto flex gap-2">{extra}</div>
    </div>
  );
}
