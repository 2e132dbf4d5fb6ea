import type { DashboardSummary } from '@callpilot/contracts';
import { formatFen } from '@/lib/format';

/** 余额与并发: what the project may still do right now. */
export function DashboardLimits({ limits }: { limits: DashboardSummary['limits'] }) {
  const items = limits.hasBalance
    ? [
        { label: '账户余额', value: formatFen(limits.balanceFen) },
        { label: '呼出并发', value: `${limits.activeOutbound} / ${limits.concurrentCallout}` },
        { label: '呼入并发', value: `${limits.activeInbound} / ${limits.concurrentCallin}` },
      ]
    : [
        { label: '账户余额', value: '不计费' },
        { label: '呼出并发', value: `${limits.activeOutbound} / 不限` },
        { label: '呼入并发', value: `${limits.activeInbound} / 不限` },
      ];
  return (
    <section aria-label="余额与并发" className="rounded-lg border border-gray-200 bg-white p-5">
      <h2 className="mb-4 text-base font-medium text-gray-900">余额与并发</h2>
      <dl className="grid grid-cols-3 gap-4">
        {items.map((item) => (
          <div key={item.label} className="flex flex-col gap-1">
            <dt className="text-sm text-gray-500">{item.label}</dt>
            <dd className="text-lg font-semibold text-gray-900">{item.value}</dd>
          </div>
        ))}
      </dl>
      <p className="mt-3 text-xs text-gray-400">并发为当前进行中的通话数 / 项目上限</p>
    </section>
  );
}
