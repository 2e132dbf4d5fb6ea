import type { DashboardAttention } from '@callpilot/contracts';
import { Link } from 'react-router';

const TONES: Record<DashboardAttention['level'], string> = {
  error: 'border-red-200 bg-red-50 text-red-800',
  warning: 'border-amber-200 bg-amber-50 text-amber-800',
  info: 'border-gray-200 bg-gray-50 text-gray-700',
};
const LEVEL_LABELS: Record<DashboardAttention['level'], string> = {
  error: '异常',
  warning: '预警',
  info: '提示',
};

/** 需要关注: worst first, each with where to act on it. Absent when all is well. */
export function DashboardAttentionList({ items }: { items: DashboardAttention[] }) {
  if (items.length === 0) return null;
  return (
    <section aria-label="需要关注" className="rounded-lg border border-gray-200 bg-white p-5">
      <h2 className="mb-3 text-base font-medium text-gray-900">需要关注</h2>
      <ul className="flex flex-col gap-2">
        {items.map((item) => (
          <li
            key={`${item.kind}-${item.title}`}
            className={`flex flex-wrap items-center justify-between gap-2 rounded border px-3 py-2 text-sm ${TONES[item.level]}`}
          >
            <span>
              <span className="mr-2 font-medium">[{LEVEL_LABELS[item.level]}]</span>
              <span className="font-medium">{item.title}</span>
              <span className="ml-2 opacity-80">{item.detail}</span>
            </span>
            <Link to={item.link} aria-label={`处理：${item.title}`}>
              去处理
            </Link>
          </li>
        ))}
      </ul>
    </section>
  );
}
