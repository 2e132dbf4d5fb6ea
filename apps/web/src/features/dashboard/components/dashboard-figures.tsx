import type { DashboardFigures } from '@callpilot/contracts';
import { Link } from 'react-router';
import { callListHref } from '@/entities/call/utils/call-paths';
import { formatPercent } from '@/lib/format';
import { formatChange, formatMinutes } from '../utils/dashboard-format';

type Item = {
  label: string;
  value: string;
  /** The figure's own number for the comparisons; rates compare in points, not in percent of percent. */
  raw: number | null;
  rate?: boolean;
};

const itemsOf = (f: DashboardFigures): Item[] => [
  { label: '通话数', value: f.calls.toLocaleString('zh-CN'), raw: f.calls },
  { label: '接通率', value: formatPercent(f.answerRate), raw: f.answerRate, rate: true },
  { label: '通话分钟', value: formatMinutes(f.talkMinutes), raw: f.talkMinutes },
  { label: 'A/B 意向占比', value: formatPercent(f.abShare), raw: f.abShare, rate: true },
];

function Change({
  label,
  value,
  base,
  rate,
}: {
  label: string;
  value: number | null;
  base: number | null;
  rate?: boolean;
}) {
  let text = '-';
  let tone = 'text-gray-400';
  if (value !== null && base !== null) {
    if (rate) {
      const points = Math.round((value - base) * 1000) / 10;
      text = points === 0 ? '持平' : `${points > 0 ? '↑' : '↓'}${Math.abs(points)} 个百分点`;
      tone = points > 0 ? 'text-green-600' : points < 0 ? 'text-red-600' : 'text-gray-500';
    } else {
      const change = formatChange(value, base);
      if (change) {
        text = change.text;
        tone =
          change.direction === 'up'
            ? 'text-green-600'
            : change.direction === 'down'
              ? 'text-red-600'
              : 'text-gray-500';
      }
    }
  }
  return (
    <span className="text-xs text-gray-500">
      {label} <span className={tone}>{text}</span>
    </span>
  );
}

/** 今日: today so far, against yesterday and the week's average up to the same time of day. */
export function TodayFigures({
  today,
  yesterday,
  weekAverage,
}: {
  today: DashboardFigures;
  yesterday: DashboardFigures;
  weekAverage: DashboardFigures;
}) {
  const base = { y: itemsOf(yesterday), w: itemsOf(weekAverage) };
  return (
    <section aria-label="今日" className="rounded-lg border border-gray-200 bg-white p-5">
      <div className="mb-4 flex items-baseline justify-between gap-2">
        <h2 className="text-base font-medium text-gray-900">今日</h2>
        <span className="text-xs text-gray-400">
          呼出 {today.outbound.toLocaleString('zh-CN')} · 呼入 {today.inbound.toLocaleString('zh-CN')} ·
          转人工 {today.transferred.toLocaleString('zh-CN')}
        </span>
      </div>
      <dl className="grid grid-cols-2 gap-4 sm:grid-cols-4">
        {itemsOf(today).map((item, i) => (
          <div key={item.label} className="flex flex-col gap-1">
            <dt className="text-sm text-gray-500">{item.label}</dt>
            <dd className="text-2xl font-semibold text-gray-900">
              {item.label === '通话数' && today.drill ? (
                <Link to={callListHref(today.drill)} aria-label={`今日通话数 ${item.value}，查看通话记录`}>
                  {item.value}
                </Link>
              ) : (
                item.value
              )}
            </dd>
            <dd className="flex flex-col">
              <Change label="较昨日同时段" value={item.raw} base={base.y[i]?.raw ?? null} rate={item.rate} />
              <Change
                label="较近 7 日同时段均值"
                value={item.raw}
                base={base.w[i]?.raw ?? null}
                rate={item.rate}
              />
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}

/** 近 7 日: the week's totals, today included. */
export function WeekFigures({ figures }: { figures: DashboardFigures }) {
  return (
    <section aria-label="近 7 日" className="rounded-lg border border-gray-200 bg-white p-5">
      <h2 className="mb-4 text-base font-medium text-gray-900">近 7 日</h2>
      <dl className="grid grid-cols-2 gap-4 sm:grid-cols-4">
        {itemsOf(figures).map((item) => (
          <div key={item.label} className="flex flex-col gap-1">
            <dt className="text-sm text-gray-500">{item.label}</dt>
            <dd className="text-2xl font-semibold text-gray-900">
              {item.label === '通话数' && figures.drill ? (
                <Link
                  to={callListHref(figures.drill)}
                  aria-label={`近 7 日通话数 ${item.value}，查看通话记录`}
                >
                  {item.value}
                </Link>
              ) : (
                item.value
              )}
            </dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
