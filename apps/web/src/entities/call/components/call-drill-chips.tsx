import { Button, Tag } from 'antd';
import { DRILL_FILTER_KEYS, type DrillFilters, drillFilterLabel } from '../utils/call-filters';

/**
 * The drill-down filters a report applied (数据统计), which the filter bar has no control for: one
 * closable chip each and 清除 for all, so the user sees why the list is narrower than the bar says.
 */
export function CallDrillChips({
  drill,
  onChange,
}: {
  drill: DrillFilters | undefined;
  onChange: (drill: DrillFilters | undefined) => void;
}) {
  const applied = DRILL_FILTER_KEYS.filter((key) => drill?.[key]);
  if (applied.length === 0) return null;
  const without = (key: (typeof DRILL_FILTER_KEYS)[number]) => {
    const { [key]: _removed, ...rest } = drill ?? {};
    onChange(Object.keys(rest).length > 0 ? rest : undefined);
  };
  return (
    <section className="flex flex-wrap items-center gap-2" aria-label="报表筛选条件">
      <span className="text-sm text-gray-500">报表筛选：</span>
      {applied.map((key) => (
        <Tag
          key={key}
          closable
          onClose={(event) => {
            event.preventDefault();
            without(key);
          }}
        >
          {drillFilterLabel(key, drill?.[key] ?? '')}
        </Tag>
      ))}
      <Button type="link" size="small" onClick={() => onChange(undefined)}>
        清除
      </Button>
    </section>
  );
}
